"""Page-index speed: pdfindex (Whoosh) against SQLite FTS5 and raw Tantivy over the same pages, one run.

What is measured, and why
-------------------------
Issue 3 sets three targets for the page index: indexing at least 150 pages/s through
the single writer, a rare term answered with p95 <= 20 ms, and a common term's top 10
with highlights with p95 <= 150 ms.  This script checks them on a corpus big enough
for posting lists to matter (50,000 pages by default) and puts SQLite FTS5 beside
pdfindex on the same pages in the same run, so the numbers can be judged against an
engine written in C rather than in the abstract, and raw Tantivy (tantivy-py, the
fastest peer: Rust, what paperless-ngx moved to from Whoosh) beside both (issue 24).

* **Corpus.**  Generated, never downloaded, from a fixed seed: documents of 1-40
  pages, ~300 words a page (240-360) in sentences and lines.  Words follow a Zipf law
  (exponent 1.0) over a 20,000-word vocabulary: about a thousand real English words
  in rough frequency order head it (so common terms and phrases are real ones such
  as "the", "of the"), and deterministic English-like pseudo-words form the tail.
  ~2 % of the pages (whole documents) are Chinese: common two- and three-character
  words without spaces, with Chinese punctuation.  Rare terms (name-like pseudo-words
  that share no stem with the vocabulary) are planted on 1-5 English pages each, so
  their page sets are known exactly.
* **Indexing.**  pdfindex: ``PageIndex.writer(batch_pages, processes=True)`` — one
  writer for the whole corpus (with ``--shards K``, a writer process per shard, fed
  by this one, as an embedded ingest writes), a commit per batch (the settings'
  ``batch_pages``, i.e. ``PDFINDEX_BATCH_PAGES`` or its default, or ``--batch``; per
  shard), timed from opening the writer to its last commit; the pages are generated
  before, so this is the writer alone.  The longest stall is the longest one
  ``add`` waited (a commit, or a shard writer's full queue).  Size from
  ``PageIndex.stats()``.  FTS5: one transaction per batch of the same size,
  ``tokenize='porter unicode61 remove_diacritics 2'`` (stemming and accent folding,
  like our analysis, though Porter's stemmer is not Whoosh's Snowball one: it
  conflates "one" with "on", so a few common-term match counts differ), WAL journal
  with ``synchronous=NORMAL`` (Whoosh never calls fsync, so FTS5's default of an
  fsync per commit would be an unfair handicap); size = database file after a WAL
  checkpoint.  Both store the page text.  Tantivy: ``tantivy.Index`` on disk, one
  ``IndexWriter`` (its default 128 MB heap and indexing threads, one per core), a
  commit per batch of the same size, then ``wait_merging_threads`` (its own merges
  end inside the timed part), and the pages visible to a new searcher; size = the
  index folder.  Its schema: the page text, title and file name as TEXT fields with
  positions, stored, tokenizer ``en_stem`` (Tantivy's default tokenizer, a split on
  non-alphanumerics and lower-casing, plus Snowball's English stemmer: the nearest
  of its own analyzers to ours); ``doc_hash`` and ``path`` stored as raw strings,
  ``page`` a stored integer.  CJK text gets a field of its own (below).  Tantivy's
  analysis is not ours (no accent folding, no CJK bigrams of its own, no word
  pairs; its stemmer is not Whoosh's), so it is a speed baseline, not an equal:
  the match counts in the table show where they part.  Pages per CPU-second counts
  every thread of this process (Tantivy indexes on threads of its own) and, for
  pdfindex, its shard writers.
* **Queries.**  Five classes, each with ``--reps`` different queries of the class
  (one more query of the class runs first as an untimed warm-up), each with
  highlights off and on, top 10:

  - rare term: a planted term (1-5 pages);
  - common term: a word on at least half of the English pages;
  - AND: two words, each on 1-10 % of the pages, taken from one page (so at least
    that page matches);
  - phrase: two adjacent common words taken from a page, as a quoted phrase;
  - CJK: two adjacent Chinese words (4-6 characters) taken from a Chinese page.

  pdfindex: ``time.perf_counter()`` around ``PageIndex.search(q, SearchOptions(
  limit=10, highlight=...))`` — whatever it does per query (get a searcher, parse,
  collect, count the matches, load stored fields and, on, build snippets), on one
  ``PageIndex`` as a long-running process would use it.  FTS5: around
  ``execute(...).fetchall()`` of ``MATCH ? ORDER BY rank LIMIT 10`` on one open
  connection, selecting the page's identity, path and title, plus
  ``snippet()`` of the text column when highlights are on.  pdfindex also counts all
  matches (``SearchResult.total``); the FTS5 statement does not (a product would need
  a second ``count(*)`` query), so FTS5 latencies are, if anything, flattering.
  Match counts shown in the table are collected outside the timed calls.  Tantivy:
  around ``TantivyIndex.answer`` — what bench/serve_load.py's Tantivy server does
  per request: a searcher from the index, the query parsed by Tantivy's own parser
  over text, title (boost 1.5, as ours) and file name with AND between words
  (``conjunction_by_default``), ``searcher.search(query, 10, count=True)`` (all
  matches counted, as pdfindex does), each hit's stored document loaded and, with
  highlights on, a ``SnippetGenerator`` of 160 characters (as pdfindex's snippets)
  made per query and its HTML snippet per hit.  Its counts come from the timed calls.
* **CJK in FTS5.**  ``unicode61`` does not segment Han text: a run of characters
  between punctuation is one token, so a word query finds almost nothing.  The CJK
  queries therefore run on a second FTS5 table with the ``trigram`` tokenizer
  (substring matching, queries of 3+ characters) holding only the pages that contain
  CJK characters (an application would route them the same way); it reads its text
  from the main table (external content), and its build time and size are included
  in FTS5's totals.  pdfindex indexes overlapping Han bigrams, so a 4-6 character
  query is a phrase of bigrams; both then mean "this exact string, not across
  punctuation", and the match counts in the table show whether they agree.  What
  ``unicode61`` alone would find is printed below the table.  Tantivy's tokenizers
  keep a run of Han characters as one token too, so its pages with CJK text get a
  ``cjk`` field: the overlapping bigrams of each run of CJK characters, made in
  Python (timed with its indexing), split on whitespace, runs kept apart by a
  filler token so that no phrase spans punctuation; a query with CJK characters is
  the phrase of its bigrams on that field (as pdfindex's), and its snippets show
  bigrams.

Latencies are p50 and p95 (nearest rank) in milliseconds.  Everything runs in this
process on warm OS caches (the index was just written); a cold cache would add disk
reads to every engine.  Indexing also reports the CPU time (with the shard writers'), and the load
average is printed at the start and the end: on a shared machine other processes
only ever add wall-clock time, and the CPU time shows how much.

The column "× pdfindex / Tantivy" is pdfindex's cost over Tantivy's: its time (p50 and
p95), its CPU and wall time per page indexed, its bytes; above 1, pdfindex is slower
or larger.  Without the ``tantivy`` package (the ``dev`` extra) or with
``--no-tantivy``, its columns are n/a.

Usage, from the project root, through the installed package (or as ``python -m
bench.search_speed``)::

    .venv/bin/python bench/search_speed.py [--pages 50000] [--shards K] [--batch N] [--reps 40] [--no-fts5]
        [--no-tantivy] [--keep DIR] [--engine whoosh|tantivy]

A kept index is queried again, nothing built, with ``--reuse DIR`` (the same
``--pages`` and ``--seed``): pdfindex's query rows and its CPU per query (this
process's CPU time, which other load on a shared machine adds less to than to the
wall clock).  Two versions of the code compare on one index by running it twice,
the second with ``PYTHONPATH`` at the other version's tree; ``--hits FILE`` writes
each query's hits with their snippets and spans (the query classes and prefix, OR
and NOT variants of them) as JSON lines for ``cmp``::

    .venv/bin/python bench/search_speed.py --pages 20000 --reuse DIR --hits FILE
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any

from pdfindex import config
from pdfindex.indexer import DocumentRecord, PageIndex, PageRecord, SearchOptions, Status
from pdfindex.indexer.analysis import stemmer
from pdfindex.indexer.store import stored_engine

try:  # the dev extra's; without it the Tantivy columns are n/a
    import tantivy
except ImportError:  # pragma: no cover - the dev extra installs it
    tantivy = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[1]

SEED = 20240613
DEFAULT_PAGES = 50_000
DEFAULT_REPS = 40
LIMIT = 10

VOCABULARY_SIZE = 20_000
ZIPF_EXPONENT = 1.0
WORDS_PER_PAGE = (240, 360)
SENTENCE_WORDS = (6, 22)
WORDS_PER_LINE = 12
DOC_PAGES = (1, 40)
CJK_SHARE = 0.02
CJK_WORDS_PER_PAGE = (200, 300)
RARE_TERMS = 120
RARE_PAGES = (1, 5)
COMMON_DF = 0.5  # a common term is on at least this share of the English pages
MID_DF = (0.01, 0.10)  # the AND class's terms are on this share of them

TARGET_PAGES_PER_SECOND = 600.0  # issue 12: the writer alone, on 2 cores
TARGET_RARE_P95_MS = 20.0
TARGET_COMMON_HIGHLIGHT_P95_MS = 150.0


def phrase_target(pages: int) -> float:
    """Issue 12's p95 for a phrase of two common words: 100 ms at 50k pages, 150 ms
    at 200k (with 4 shards); none is set beyond."""
    return 100.0 if pages <= 50_000 else 150.0

_OPEN, _CLOSE = "\x02", "\x03"  # highlight markers, as indexer.search uses
_CJK_CHARS = re.compile("[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[a-z]+")

#: The head of the vocabulary: real English words, roughly most frequent first.
ENGLISH_WORDS = """
the of and to a in is that for it as was with be by on not he this are or his from at which
but have an had they you were their one all we can her has there been if more when will would
who so no time about many then them some these two may first water people over after years
work system between number through world general however because government public against
under without example within problem should during information second large process several
important political although different following economic national evidence therefore research
analysis particular structure condition effective knowledge relation available position
document surface pressure argument distance temperature function measure other into only new
could also its our out what up do any than most such even made like back well where much before
must way being how those both each same here why great still make while state three just
never year last since part place case day long good little small own world right down life old
high day found another end left take come might become show change set point again around form
home hand head go see give know think look want use find tell ask seem feel try leave call
keep let begin help talk turn start run move live believe hold bring happen write provide sit
stand lose pay meet include continue learn lead understand watch follow stop create speak read
allow add spend grow open walk win offer remember love consider appear buy wait serve die send
expect build stay fall cut reach kill remain suggest raise pass sell require decide pull
group company fact area side kind head house service friend father power hour game line member
law car city community name president team minute idea body face others level office door
health person art war history party result morning reason early moment air teacher force
education foot boy age policy everything process music market sense nation plan college
interest death experience effect class control care field development role effort rate heart
drug show leader light voice wife police mind price report decision son view relationship town
road arm difference value building action model season society tax director position player
record paper space ground form event official matter center couple site project activity star
table need court oil situation cost industry figure street image phone data picture practice
piece land product doctor wall patient worker news test movie north love support technology
step baby computer type attention film tree source organization hair window care evening
account method chapter section volume index search reader writer library archive letter
question answer theory value figure summary review approach quality average variation sample
survey proof equation matrix vector element boundary kernel river mountain weather garden
village journey harbour invoice payment balance quarter annual contract agreement customer
supplier order delivery schedule budget revenue expense profit loss asset liability equity
capital interest loan credit debit transaction statement audit compliance regulation
standard procedure requirement specification design engineering material component assembly
product manufacturing production operation maintenance inspection safety risk hazard incident
report analysis assessment evaluation performance measurement indicator target objective
strategy planning management administration department division unit branch region district
province country county municipal federal council committee board meeting minutes agenda
resolution motion vote election candidate campaign citizen resident population census
survey household income employment unemployment labour wage salary pension benefit insurance
claim premium coverage policy holder beneficiary property estate building construction
renovation repair energy electricity gas fuel emission pollution environment climate carbon
water waste recycling transport vehicle traffic railway airport harbour shipping freight
cargo container warehouse inventory stock supply demand trade export import tariff customs
border immigration visa passport identity certificate license permit registration
application form signature date address telephone email website network internet software
hardware device server database memory storage processor program code algorithm function
variable parameter input output file folder directory page text font character word sentence
paragraph title author editor publisher edition journal article conference proceedings
abstract introduction conclusion discussion reference appendix footnote citation
bibliography university student professor lecture course degree thesis dissertation
experiment laboratory instrument observation hypothesis theory principle law rule formula
calculation estimate approximation error uncertainty probability distribution mean median
deviation regression correlation coefficient significance test hypothesis sample population
cell protein gene molecule atom particle energy mass velocity acceleration force momentum
field wave frequency signal noise filter circuit voltage current resistance power battery
engine motor pump valve pipe tank reactor heat cooling pressure flow fluid liquid solid
surface layer coating metal steel iron copper aluminium plastic glass wood paper fabric
patient treatment therapy diagnosis symptom disease infection virus bacteria vaccine dose
hospital clinic nurse physician surgery medicine prescription trial outcome mortality
child parent family mother daughter brother sister husband woman man girl friend neighbour
food meal bread meat fish fruit vegetable milk coffee tea wine beer sugar salt oil
school class lesson homework exam grade teacher pupil book story novel poem song film
picture painting museum gallery theatre concert festival holiday travel hotel restaurant
street road bridge tower castle church temple palace park square market shop store bank
money cash coin note price value cost fee charge rent tax duty fine penalty discount
morning afternoon evening night week month season spring summer autumn winter today
yesterday tomorrow hour minute second moment period era century decade history future past
north south east west left right top bottom front back middle center edge corner side
red blue green yellow black white brown grey orange purple colour light dark bright
big small large little long short tall high low wide narrow deep shallow thick thin heavy
hot cold warm cool wet dry hard soft strong weak fast slow quick easy difficult simple
good bad better best worse worst new old young early late recent modern ancient former
true false real possible likely certain clear obvious necessary important significant
major minor main primary secondary basic total complete full empty whole single double
common rare special general specific particular individual personal private public social
national international local regional global central internal external foreign domestic
political economic financial commercial industrial technical scientific medical legal
natural physical chemical biological mental human animal plant earth sun moon sky sea
ocean lake island forest desert hill valley field farm garden flower grass rock stone sand
always often sometimes usually rarely never again already still yet soon later now then
here there everywhere somewhere nowhere above below behind beside beyond inside outside
near far away together apart alone almost nearly quite rather very really too enough
perhaps maybe probably certainly clearly simply directly finally generally especially
quickly slowly carefully easily recently currently previously immediately eventually
""".split()

#: Common Chinese words (two and three characters), roughly most frequent first.
HAN_WORDS = """
我们 他们 中国 国家 发展 经济 社会 工作 问题 企业 政府 市场 技术 管理 系统 数据 信息 服务
研究 文件 报告 项目 建设 部门 人民 生产 产品 环境 安全 质量 教育 科学 文化 历史 城市
地区 国际 世界 公司 银行 资金 投资 价格 成本 利润 收入 支出 合同 协议 规定 法律 标准
要求 条件 情况 结果 方法 方式 过程 内容 目标 计划 任务 活动 组织 单位 人员 学生 老师
学校 大学 医院 医生 病人 治疗 健康 生活 家庭 孩子 朋友 时间 今天 明天 昨天 年度 季度
北京 上海 广州 深圳 检索 全文 索引 文档 页面 文本 字符 汉字 中文 英文 翻译 软件 硬件
网络 电脑 手机 用户 客户 供应商 订单 发票 付款 账户 税务 审计 会计 财务 预算 统计
分析 评估 检查 监督 控制 改革 开放 创新 合作 交流 会议 讨论 决定 通知 公告 申请
批准 登记 证书 许可 身份 地址 电话 邮件 网站 数据库 服务器 程序 代码 算法 功能 参数
输入 输出 格式 标题 作者 出版 期刊 论文 摘要 引言 结论 参考 文献 附录 实验 理论 模型
能源 电力 交通 运输 铁路 机场 港口 物流 仓库 库存 贸易 出口 进口 海关 农业 工业 制造
""".split()

_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "cl",
           "cr", "dr", "fl", "fr", "gl", "gr", "pl", "pr", "sc", "sh", "sl", "sp", "st", "str", "th", "tr", "ch")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ee", "ie", "oo", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "t", "m", "nd", "nt", "st", "ck", "ng", "rd", "rn", "x")
_SUFFIXES = ("", "", "", "", "", "tion", "ment", "ness", "ing", "ed", "er", "ly", "able", "ist", "ous", "al")
_NAME_ENDINGS = ("ski", "berg", "wick", "ford", "ton", "ley", "ova", "dottir", "sen", "escu")

PageKey = tuple[str, int]  # (doc_hash, page number)


# ------------------------------------------------------------------ corpus

@dataclass(frozen=True, slots=True)
class Document:
    record: DocumentRecord
    pages: tuple[PageRecord, ...]
    cjk: bool


@dataclass(slots=True)
class Corpus:
    seed: int
    documents: list[Document]
    rare: dict[str, frozenset[PageKey]]  # planted term -> the pages it is on
    page_df: Counter[str]  # lower-case word -> English pages it is on
    english_pages: int
    cjk_pages: int
    words: int
    cjk_samples: list[str]  # adjacent Chinese word pairs seen on Chinese pages
    vocabulary: tuple[str, ...]

    @property
    def pages(self) -> int:
        return self.english_pages + self.cjk_pages


def _pseudo_word(rng: random.Random, syllables: int) -> str:
    word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
    return word + rng.choice(_SUFFIXES)


def build_vocabulary(seed: int, size: int = VOCABULARY_SIZE) -> tuple[str, ...]:
    """Real English words first, then distinct pseudo-words up to ``size``."""
    words = list(dict.fromkeys(ENGLISH_WORDS))
    seen = set(words)
    rng = random.Random(seed ^ 0x5EED)
    while len(words) < size:
        word = _pseudo_word(rng, rng.choice((1, 2, 2, 3)))
        if len(word) >= 3 and word not in seen:
            seen.add(word)
            words.append(word)
    return tuple(words[:size])


def rare_terms(seed: int, vocabulary: Sequence[str], count: int = RARE_TERMS) -> list[str]:
    """Name-like pseudo-words whose stem no vocabulary word shares."""
    stem = stemmer("en") or (lambda w: w)
    taken = {stem(w) for w in vocabulary} | set(vocabulary)
    rng = random.Random(seed ^ 0xA11CE)
    terms: list[str] = []
    while len(terms) < count:
        term = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(2)) + rng.choice(_NAME_ENDINGS)
        if term not in taken and stem(term) not in taken:
            taken.update((term, stem(term)))
            terms.append(term)
    return terms


def _english_page(rng: random.Random, vocabulary: Sequence[str], cum: Sequence[float],
                  planted: Sequence[str]) -> tuple[str, list[str]]:
    words = rng.choices(vocabulary, cum_weights=cum, k=rng.randint(*WORDS_PER_PAGE))
    for term in planted:
        words.insert(rng.randrange(len(words) + 1), term.capitalize())
    out: list[str] = []
    i = 0
    while i < len(words):
        sentence = words[i:i + rng.randint(*SENTENCE_WORDS)]
        i += len(sentence)
        sentence[0] = sentence[0].capitalize()
        if len(sentence) > 8 and rng.random() < 0.5:
            k = rng.randrange(3, len(sentence) - 2)
            sentence[k] += ","
        sentence[-1] += "."
        out.extend(sentence)
    lines = [" ".join(out[j:j + WORDS_PER_LINE]) for j in range(0, len(out), WORDS_PER_LINE)]
    return "\n".join(lines), words


def _cjk_page(rng: random.Random, cum: Sequence[float], samples: list[str]) -> str:
    words = rng.choices(HAN_WORDS, cum_weights=cum, k=rng.randint(*CJK_WORDS_PER_PAGE))
    pieces: list[str] = []
    clause = 0
    for n, word in enumerate(words):
        pieces.append(word)
        clause += 1
        if clause >= 4 and rng.random() < 0.2:
            pieces.append("。\n" if rng.random() < 0.4 else "，")
            clause = 0
        elif clause >= 2 and n + 1 < len(words) and rng.random() < 0.02:
            samples.append(word + words[n + 1])
    pieces.append("。")
    return "".join(pieces)


def generate_corpus(pages: int = DEFAULT_PAGES, seed: int = SEED) -> Corpus:
    """The synthetic corpus: deterministic for a page count and seed."""
    if pages < 1:
        raise ValueError("pages must be at least 1")
    rng = random.Random(seed)
    vocabulary = build_vocabulary(seed)
    cum = list(accumulate(1.0 / (r ** ZIPF_EXPONENT) for r in range(1, len(vocabulary) + 1)))
    han_cum = list(accumulate(1.0 / r for r in range(1, len(HAN_WORDS) + 1)))

    sizes: list[int] = []
    while sum(sizes) < pages:
        sizes.append(min(rng.randint(*DOC_PAGES), pages - sum(sizes)))
    # whole documents become Chinese until ~2 % of the pages (at least one) are
    order = list(range(len(sizes)))
    rng.shuffle(order)
    cjk_docs: set[int] = set()
    quota = max(1, round(pages * CJK_SHARE))
    cjk_total = 0
    for d in order:
        if cjk_total >= quota:
            break
        if cjk_total + sizes[d] <= quota * 1.5 or not cjk_docs:
            cjk_docs.add(d)
            cjk_total += sizes[d]
    english_slots = [(d, p) for d, size in enumerate(sizes) if d not in cjk_docs for p in range(1, size + 1)]
    planted: dict[tuple[int, int], list[str]] = {}
    for term in rare_terms(seed, vocabulary):
        for slot in rng.sample(english_slots, min(len(english_slots), rng.randint(*RARE_PAGES))):
            planted.setdefault(slot, []).append(term)

    documents: list[Document] = []
    rare: dict[str, set[PageKey]] = {}
    page_df: Counter[str] = Counter()
    cjk_samples: list[str] = []
    words_total = 0
    for d, size in enumerate(sizes):
        doc_hash = hashlib.sha256(f"search-bench:{seed}:{d}".encode()).hexdigest()
        cjk = d in cjk_docs
        if cjk:
            title = "".join(rng.choices(HAN_WORDS, cum_weights=han_cum, k=rng.randint(2, 5)))
        else:
            title = " ".join(rng.choices(vocabulary, cum_weights=cum, k=rng.randint(2, 6))).title()
        records: list[PageRecord] = []
        for number in range(1, size + 1):
            if cjk:
                text = _cjk_page(rng, han_cum, cjk_samples)
            else:
                terms = planted.get((d, number), [])
                text, words = _english_page(rng, vocabulary, cum, terms)
                words_total += len(words)
                page_df.update({w.lower() for w in words})
                for term in terms:
                    rare.setdefault(term, set()).add((doc_hash, number))
            glyphs = len(text) - text.count(" ") - text.count("\n")
            records.append(PageRecord(number=number, text=text, coverage=1.0, glyphs=glyphs, unresolved=0,
                                      needs_ocr=False))
        record = DocumentRecord(
            doc_hash=doc_hash, path=f"/archive/{2000 + d % 25}/box{d % 97:02d}/doc{d:06d}.pdf",
            status=Status.INDEXED, page_count=size, title=title, producer="search-bench",
            size=40_000 * size, mtime=1.7e9 + d, ingested=1.7e9 + d, mean_coverage=1.0,
        )
        documents.append(Document(record, tuple(records), cjk))
    return Corpus(
        seed=seed, documents=documents, rare={t: frozenset(p) for t, p in sorted(rare.items())},
        page_df=page_df, english_pages=len(english_slots), cjk_pages=cjk_total, words=words_total,
        cjk_samples=cjk_samples, vocabulary=vocabulary,
    )


# ------------------------------------------------------------------ queries

@dataclass(frozen=True, slots=True)
class Query:
    whoosh: str  # pdfindex query syntax
    fts5: str  # FTS5 MATCH expression
    cjk: bool = False


@dataclass(frozen=True, slots=True)
class QueryClass:
    key: str
    label: str
    queries: tuple[Query, ...]  # the first is the warm-up


def _page_words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def choose_queries(corpus: Corpus, reps: int = DEFAULT_REPS) -> list[QueryClass]:
    """``reps`` + 1 queries of each class (the first one warms up), deterministic."""
    rng = random.Random(corpus.seed ^ 0x9E77)
    count = reps + 1
    english = [(doc, page) for doc in corpus.documents if not doc.cjk for page in doc.pages]
    n = max(1, corpus.english_pages)
    df = corpus.page_df
    rare_terms_used = set(corpus.rare)

    def cycle(items: list[Query]) -> tuple[Query, ...]:
        if not items:
            raise ValueError("no query of this class in the corpus")
        return tuple(items[i % len(items)] for i in range(count))

    rare = [Query(t, f'"{t}"') for t in rng.sample(sorted(corpus.rare), min(count, len(corpus.rare)))]

    by_df = sorted(df.items(), key=lambda item: (-item[1], item[0]))  # ties by word: set order varies by run
    common_words = [w for w, c in by_df if c >= COMMON_DF * n and w not in rare_terms_used]
    common = [Query(w, f'"{w}"') for w in common_words[:count]]
    common_set = set(common_words)

    lo, hi = max(2, math.ceil(MID_DF[0] * n)), max(2, math.floor(MID_DF[1] * n))
    pairs: list[Query] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(200 * count):
        if len(pairs) >= count:
            break
        _, page = rng.choice(english)
        band = sorted({w for w in _page_words(page.text) if lo <= df[w] <= hi})
        if len(band) < 2:
            continue
        a, b = rng.sample(band, 2)
        if (a, b) not in seen:
            seen.add((a, b))
            pairs.append(Query(f"{a} {b}", f'"{a}" "{b}"'))

    phrases: list[Query] = []
    seen = set()
    for _ in range(200 * count):
        if len(phrases) >= count:
            break
        _, page = rng.choice(english)
        words = _page_words(page.text)
        adjacent = [(a, b) for a, b in pairwise(words)
                    if a != b and a in common_set and b in common_set and (a, b) not in seen]
        if adjacent:
            a, b = rng.choice(adjacent)
            seen.add((a, b))
            phrases.append(Query(f'"{a} {b}"', f'"{a} {b}"'))

    samples = list(dict.fromkeys(corpus.cjk_samples))
    cjk = [Query(s, f'"{s}"', cjk=True) for s in rng.sample(samples, min(count, len(samples)))]

    return [
        QueryClass("rare", "rare term", cycle(rare)),
        QueryClass("common", "common term", cycle(common)),
        QueryClass("and", "AND of two mid-frequency terms", cycle(pairs)),
        QueryClass("phrase", "phrase of two common words", cycle(phrases)),
        QueryClass("cjk", "CJK (Chinese) words", cycle(cjk)),
    ]


# ------------------------------------------------------------------ engines

@dataclass(frozen=True, slots=True)
class IndexReport:
    seconds: float  # wall clock
    cpu_seconds: float  # this process's and its shard writers' CPU time: less sensitive to other load
    pages: int
    size_bytes: int
    longest_stall: float = 0.0  # the longest one add() waited: a commit, or a shard writer's full queue

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else math.inf


def build_pdfindex(corpus: Corpus, root: Path, language: str, batch_pages: int,
                   shards: int = 1, engine: str = "whoosh") -> tuple[PageIndex, IndexReport]:
    """Index the corpus through the index's writer (one PageWriter, or a process per
    shard, as an embedded ingest writes); returns the index and its report."""
    index = PageIndex(root, language, new_shards=shards, new_engine=engine)
    started, cpu = time.perf_counter(), _cpu_seconds()
    longest = 0.0
    with index.writer(batch_pages=batch_pages, processes=True) as writer:
        for doc in corpus.documents:
            added = time.perf_counter()
            writer.add(doc.record, list(doc.pages))
            longest = max(longest, time.perf_counter() - added)
    seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    stats = index.stats()
    if stats.pages != corpus.pages:
        raise RuntimeError(f"pdfindex holds {stats.pages} pages of {corpus.pages}")
    return index, IndexReport(seconds, cpu, stats.pages, stats.size_bytes, longest)


def _cpu_seconds() -> float:
    """This process's CPU time and that of its children that ended (shard writers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def pdfindex_search(index: PageIndex, query: str, highlight: bool) -> tuple[float, int, bool]:
    """Seconds taken by one top-10 search, its total matches, whether it was cut short."""
    options = SearchOptions(limit=LIMIT, highlight=highlight)
    started = time.perf_counter()
    result = index.search(query, options)
    return time.perf_counter() - started, result.total, result.partial


def pdfindex_pages(index: PageIndex, query: str, limit: int = 10_000) -> set[PageKey]:
    result = index.search(query, SearchOptions(limit=limit, highlight=False))
    return {(h.doc_hash, h.page) for h in result.hits}


@dataclass(frozen=True, slots=True)
class Fts5Support:
    fts5: bool
    trigram: bool
    note: str


def fts5_support() -> Fts5Support:
    """Whether this Python's SQLite has FTS5 and its trigram tokenizer (3.34+)."""
    with closing(sqlite3.connect(":memory:")) as conn:
        try:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(a)")
        except sqlite3.Error as exc:
            return Fts5Support(False, False, f"SQLite {sqlite3.sqlite_version} has no FTS5 ({exc})")
        try:
            conn.execute("CREATE VIRTUAL TABLE probe3 USING fts5(a, tokenize='trigram')")
        except sqlite3.Error:
            return Fts5Support(True, False, f"SQLite {sqlite3.sqlite_version}: FTS5 without the trigram tokenizer")
    return Fts5Support(True, True, f"SQLite {sqlite3.sqlite_version}: FTS5 with the trigram tokenizer")


_FTS_COLUMNS = "doc_hash UNINDEXED, path UNINDEXED, page UNINDEXED, text, title, filename"
_TEXT_COLUMN = 3


class Fts5Index:
    """The same pages in SQLite FTS5: ``pages`` (porter + unicode61) for all pages and,
    when the tokenizer exists, ``pages_cjk`` (trigram, external content) for the pages
    with CJK characters."""

    def __init__(self, path: Path, support: Fts5Support) -> None:
        self.path = path
        self.trigram = support.trigram
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(
            f"CREATE VIRTUAL TABLE pages USING fts5({_FTS_COLUMNS}, "
            "tokenize='porter unicode61 remove_diacritics 2')")
        if self.trigram:
            self.conn.execute(
                f"CREATE VIRTUAL TABLE pages_cjk USING fts5({_FTS_COLUMNS}, content='pages', "
                "content_rowid='rowid', tokenize='trigram')")

    def close(self) -> None:
        self.conn.close()

    def build(self, corpus: Corpus, batch_pages: int) -> IndexReport:
        conn = self.conn
        insert = "INSERT INTO pages(rowid, doc_hash, path, page, text, title, filename) VALUES (?, ?, ?, ?, ?, ?, ?)"
        insert_cjk = insert.replace("INTO pages(", "INTO pages_cjk(")
        rowid = 0
        pending = 0
        started, cpu = time.perf_counter(), time.process_time()
        conn.execute("BEGIN")
        for doc in corpus.documents:
            rec = doc.record
            rows = []
            for page in doc.pages:
                rowid += 1
                rows.append((rowid, rec.doc_hash, rec.path, page.number, page.text, rec.title, rec.filename))
            conn.executemany(insert, rows)
            if self.trigram:
                conn.executemany(insert_cjk, [r for r in rows if _CJK_CHARS.search(r[4]) or _CJK_CHARS.search(r[5])])
            pending += len(rows)
            if pending >= batch_pages:  # as PageWriter: commit after the document that fills the batch
                conn.execute("COMMIT")
                conn.execute("BEGIN")
                pending = 0
        conn.execute("COMMIT")
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return IndexReport(seconds, cpu, rowid, size)

    def _table(self, query: Query) -> str:
        return "pages_cjk" if query.cjk and self.trigram else "pages"

    def search(self, query: Query, highlight: bool) -> tuple[float, int]:
        """Seconds taken by one top-10 query and the rows it returned."""
        table = self._table(query)
        if highlight:
            sql = (f"SELECT doc_hash, page, path, title, snippet({table}, {_TEXT_COLUMN}, ?, ?, '…', 32) "
                   f"FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT {LIMIT}")
            params: tuple[str, ...] = (_OPEN, _CLOSE, query.fts5)
        else:
            sql = f"SELECT doc_hash, page, path, title FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT {LIMIT}"
            params = (query.fts5,)
        started = time.perf_counter()
        rows = self.conn.execute(sql, params).fetchall()
        return time.perf_counter() - started, len(rows)

    def count(self, query: Query, table: str | None = None) -> int:
        table = table or self._table(query)
        row = self.conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (query.fts5,)).fetchone()
        return int(row[0])

    def pages(self, query: Query) -> set[PageKey]:
        table = self._table(query)
        return {(h, int(p)) for h, p in self.conn.execute(
            f"SELECT doc_hash, page FROM {table} WHERE {table} MATCH ?", (query.fts5,))}


TANTIVY_SNIPPET_CHARS = 160  # as pdfindex's snippets (indexer/search.py)
#: The fields a query searches, with pdfindex's boosts (indexer/query_build.py's DEFAULT_FIELDS).
TANTIVY_FIELDS = {"text": 1.0, "title": 1.5, "filename": 1.0}
_CJK_RUN = re.compile(_CJK_CHARS.pattern + "+")
_CJK_GAP = "|"  # a token between runs of CJK characters: no phrase of bigrams spans two runs


def tantivy_support() -> str | None:
    """Why raw Tantivy cannot run here, or None when it can."""
    if tantivy is None:
        return "raw Tantivy left out: the tantivy package is not installed (pip install -e '.[dev]')"
    return None


def tantivy_version() -> str:
    """tantivy-py's version line ("tantivy v0.27.0, index_format v7"), which its stub omits."""
    return str(getattr(tantivy, "__version__", "unknown version"))


def cjk_bigrams(text: str) -> str:
    """The overlapping bigrams of each run of CJK characters (a lone character as
    itself), space-separated, runs apart by a filler token: Tantivy's tokenizers keep
    a Han run whole, and bigrams are what pdfindex indexes."""
    runs = [run if len(run) == 1 else " ".join(run[i:i + 2] for i in range(len(run) - 1))
            for run in _CJK_RUN.findall(text)]
    return f" {_CJK_GAP} ".join(runs)


class TantivyIndex:
    """The same pages in raw Tantivy, the way a small application would use tantivy-py:
    its own query parser and snippets, no analysis of ours (see the module's docstring)."""

    def __init__(self, path: Path, create: bool = True) -> None:
        if tantivy is None:
            raise RuntimeError(tantivy_support())
        self.path = path
        if create:
            path.mkdir(parents=True, exist_ok=False)
            builder = tantivy.SchemaBuilder()
            builder.add_text_field("doc_hash", stored=True, tokenizer_name="raw", index_option="basic")
            builder.add_integer_field("page", stored=True)
            builder.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
            for name in TANTIVY_FIELDS:
                builder.add_text_field(name, stored=True, tokenizer_name="en_stem")
            builder.add_text_field("cjk", stored=True, tokenizer_name="whitespace")
            self.index = tantivy.Index(builder.build(), str(path))
        else:
            self.index = tantivy.Index.open(str(path))
        self.schema = self.index.schema

    @classmethod
    def open(cls, path: Path) -> TantivyIndex:
        return cls(path, create=False)

    def build(self, corpus: Corpus, batch_pages: int) -> IndexReport:
        started, cpu = time.perf_counter(), _cpu_seconds()
        writer = self.index.writer()
        pages = pending = 0
        for doc in corpus.documents:
            rec = doc.record
            for page in doc.pages:
                fields: dict[str, object] = {"doc_hash": rec.doc_hash, "page": page.number, "path": rec.path,
                                             "text": page.text, "title": rec.title or "", "filename": rec.filename}
                if _CJK_CHARS.search(page.text):
                    fields["cjk"] = cjk_bigrams(page.text)
                writer.add_document(tantivy.Document(**fields))
            pages += len(doc.pages)
            pending += len(doc.pages)
            if pending >= batch_pages:  # as PageWriter: commit after the document that fills the batch
                writer.commit()
                pending = 0
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
        held = self.index.searcher().num_docs
        if held != pages:
            raise RuntimeError(f"Tantivy holds {held} pages of {pages}")
        size = sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())
        return IndexReport(seconds, cpu, pages, size)

    def parse(self, text: str) -> tuple[Any, str]:
        """The Tantivy query for a query of the bench (pdfindex's syntax: words, all
        required, or a quoted phrase; CJK as the phrase of its bigrams) and the field
        its snippets come from."""
        if _CJK_CHARS.search(text):
            return self.index.parse_query(f'"{cjk_bigrams(text.strip(chr(34)))}"', ["cjk"]), "cjk"
        return self.index.parse_query(text, list(TANTIVY_FIELDS), field_boosts=TANTIVY_FIELDS,
                                      conjunction_by_default=True), "text"

    def answer(self, text: str, limit: int = LIMIT, highlight: bool = True) -> tuple[int, list[dict[str, Any]]]:
        """All matches counted and the top ``limit`` with their stored identity and,
        with ``highlight``, an HTML snippet each: one request of a search API."""
        searcher = self.index.searcher()
        query, snippet_field = self.parse(text)
        result = searcher.search(query, limit, count=True)
        snippets = None
        if highlight and result.hits:
            snippets = tantivy.SnippetGenerator.create(searcher, query, self.schema, snippet_field)
            snippets.set_max_num_chars(TANTIVY_SNIPPET_CHARS)
        hits: list[dict[str, Any]] = []
        for score, address in result.hits:
            doc = searcher.doc(address)
            hit = {"doc_hash": doc.get_first("doc_hash"), "page": doc.get_first("page"), "path": doc.get_first("path"),
                   "title": doc.get_first("title"), "score": score}
            if snippets is not None:
                hit["snippet"] = snippets.snippet_from_doc(doc).to_html()
            hits.append(hit)
        return int(result.count or 0), hits  # type: ignore[attr-defined]  # count=True sets it; the stub omits it

    def search(self, text: str, highlight: bool) -> tuple[float, int]:
        """Seconds taken by one top-10 query and its total matches."""
        started = time.perf_counter()
        total, _ = self.answer(text, LIMIT, highlight)
        return time.perf_counter() - started, total

    def pages(self, text: str, limit: int = 10_000) -> set[PageKey]:
        _, hits = self.answer(text, limit, highlight=False)
        return {(h["doc_hash"], int(h["page"])) for h in hits}


# ------------------------------------------------------------------ measuring

@dataclass(slots=True)
class Latency:
    samples_ms: list[float] = field(default_factory=list)
    matches: list[int] = field(default_factory=list)
    partial: int = 0
    cpu_seconds: float = 0.0  # this process's, over the timed queries: what other load on the machine cannot add to

    def percentile(self, p: float) -> float:
        """Nearest-rank percentile."""
        ordered = sorted(self.samples_ms)
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p95(self) -> float:
        return self.percentile(95)


Measurements = dict[tuple[str, bool], Latency]  # (class key, highlight) -> latency


def measure_pdfindex(index: PageIndex, classes: Sequence[QueryClass]) -> Measurements:
    out: Measurements = {}
    for qc in classes:
        for highlight in (False, True):
            pdfindex_search(index, qc.queries[0].whoosh, highlight)  # warm-up
            lat = Latency()
            cpu = time.process_time()
            for q in qc.queries[1:]:
                seconds, total, partial = pdfindex_search(index, q.whoosh, highlight)
                lat.samples_ms.append(seconds * 1000)
                lat.matches.append(total)
                lat.partial += partial
            lat.cpu_seconds = time.process_time() - cpu
            out[qc.key, highlight] = lat
    return out


def measure_fts5(fts: Fts5Index, classes: Sequence[QueryClass]) -> Measurements:
    out: Measurements = {}
    for qc in classes:
        for highlight in (False, True):
            fts.search(qc.queries[0], highlight)  # warm-up
            lat = Latency()
            for q in qc.queries[1:]:
                seconds, _ = fts.search(q, highlight)
                lat.samples_ms.append(seconds * 1000)
            lat.matches = [fts.count(q) for q in qc.queries[1:]]  # untimed
            out[qc.key, highlight] = lat
    return out


def measure_tantivy(tv: TantivyIndex, classes: Sequence[QueryClass]) -> Measurements:
    out: Measurements = {}
    for qc in classes:
        for highlight in (False, True):
            tv.search(qc.queries[0].whoosh, highlight)  # warm-up
            lat = Latency()
            for q in qc.queries[1:]:
                seconds, total = tv.search(q.whoosh, highlight)
                lat.samples_ms.append(seconds * 1000)
                lat.matches.append(total)
            out[qc.key, highlight] = lat
    return out


# ------------------------------------------------------------------ report

@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    ours: str
    fts5: str
    target: str = ""
    verdict: str = ""
    tantivy: str = "n/a"
    ratio: str = ""  # pdfindex's cost over Tantivy's


def _times(ours: float, theirs: float) -> str:
    """pdfindex's cost over Tantivy's, as the ratio column shows it."""
    if theirs <= 0 or not math.isfinite(ours / theirs):
        return "-"
    ratio = ours / theirs
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}"


def _lat_ratio(ours_m: Measurements, tv_m: Measurements | None, key: tuple[str, bool]) -> str:
    if tv_m is None:
        return ""
    return f"{_times(ours_m[key].p50, tv_m[key].p50)} / {_times(ours_m[key].p95, tv_m[key].p95)}"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def _lat(m: Measurements | None, key: tuple[str, bool]) -> str:
    if m is None:
        return "n/a"
    lat = m[key]
    return f"{lat.p50:.1f} / {lat.p95:.1f}"


def _per_cpu_second(report: IndexReport) -> str:
    return f"{report.pages / report.cpu_seconds:.0f}" if report.cpu_seconds > 0 else "-"


def build_rows(corpus: Corpus, ours: IndexReport, ours_m: Measurements, fts: IndexReport | None,
               fts_m: Measurements | None, classes: Sequence[QueryClass], tv: IndexReport | None = None,
               tv_m: Measurements | None = None) -> list[Row]:
    rows = [
        Row("indexing, pages/s", f"{ours.pages_per_second:.0f}",
            f"{fts.pages_per_second:.0f}" if fts else "n/a", f">= {TARGET_PAGES_PER_SECOND:.0f}",
            _verdict(ours.pages_per_second >= TARGET_PAGES_PER_SECOND),
            f"{tv.pages_per_second:.0f}" if tv else "n/a",
            _times(ours.seconds / ours.pages, tv.seconds / tv.pages) if tv else ""),
        Row("indexing, pages per CPU-second", _per_cpu_second(ours), _per_cpu_second(fts) if fts else "n/a",
            tantivy=_per_cpu_second(tv) if tv else "n/a",
            ratio=_times(ours.cpu_seconds / ours.pages, tv.cpu_seconds / tv.pages) if tv else ""),
        Row("indexing time, s (wall / CPU)", f"{ours.seconds:.1f} / {ours.cpu_seconds:.1f}",
            f"{fts.seconds:.1f} / {fts.cpu_seconds:.1f}" if fts else "n/a",
            tantivy=f"{tv.seconds:.1f} / {tv.cpu_seconds:.1f}" if tv else "n/a"),
        Row("longest writer stall (one add), s", f"{ours.longest_stall:.1f}", "n/a"),
        Row("index size on disk, MB", f"{ours.size_bytes / 1e6:.1f}", f"{fts.size_bytes / 1e6:.1f}" if fts else "n/a",
            tantivy=f"{tv.size_bytes / 1e6:.1f}" if tv else "n/a",
            ratio=_times(ours.size_bytes, tv.size_bytes) if tv else ""),
    ]
    return rows + query_rows(corpus, ours_m, fts_m, classes, tv_m)


def query_rows(corpus: Corpus, ours_m: Measurements, fts_m: Measurements | None, classes: Sequence[QueryClass],
               tv_m: Measurements | None = None) -> list[Row]:
    rows = []
    for qc in classes:
        off, on = (qc.key, False), (qc.key, True)
        target_off = target_on = verdict_off = verdict_on = ""
        if qc.key == "rare":
            target_off = target_on = f"p95 <= {TARGET_RARE_P95_MS:.0f}"
            verdict_off = _verdict(ours_m[off].p95 <= TARGET_RARE_P95_MS)
            verdict_on = _verdict(ours_m[on].p95 <= TARGET_RARE_P95_MS)
        elif qc.key == "common":
            target_on = f"p95 <= {TARGET_COMMON_HIGHLIGHT_P95_MS:.0f}"
            verdict_on = _verdict(ours_m[on].p95 <= TARGET_COMMON_HIGHLIGHT_P95_MS)
        elif qc.key == "phrase":
            target = phrase_target(corpus.pages)
            target_on = f"p95 <= {target:.0f}"
            verdict_on = _verdict(ours_m[on].p95 <= target)
        rows.append(Row(f"{qc.label}: pages matched, median", f"{statistics.median(ours_m[off].matches):g}",
                        f"{statistics.median(fts_m[off].matches):g}" if fts_m else "n/a",
                        tantivy=f"{statistics.median(tv_m[off].matches):g}" if tv_m else "n/a"))
        rows.append(Row(f"{qc.label}, highlights off: p50 / p95 ms", _lat(ours_m, off), _lat(fts_m, off),
                        target_off, verdict_off, _lat(tv_m, off), _lat_ratio(ours_m, tv_m, off)))
        rows.append(Row(f"{qc.label}, highlights on: p50 / p95 ms", _lat(ours_m, on), _lat(fts_m, on),
                        target_on, verdict_on, _lat(tv_m, on), _lat_ratio(ours_m, tv_m, on)))
    return rows


def format_table(rows: Sequence[Row], engine: str = "whoosh") -> str:
    header = ("metric", f"pdfindex ({engine.capitalize()})", "SQLite FTS5", "raw Tantivy", "× pdfindex / Tantivy",
              "target", "pdfindex")
    lines = [f"| {' | '.join(header)} |", f"|{'|'.join('---' for _ in header)}|"]
    lines += [f"| {r.metric} | {r.ours} | {r.fts5} | {r.tantivy} | {r.ratio} | {r.target} | {r.verdict} |"
              for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------ main

def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    settings = config.load()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES, help=f"pages to generate (default {DEFAULT_PAGES})")
    parser.add_argument("--batch", type=int, default=settings.batch_pages,
                        help=f"pages per commit (default PDFINDEX_BATCH_PAGES or {settings.batch_pages})")
    parser.add_argument("--shards", type=int, default=1, help="shards of the pdfindex index (default 1)")
    parser.add_argument("--engine", choices=config.ENGINES, default=settings.engine,
                        help=f"engine of the pdfindex index (default PDFINDEX_ENGINE or {settings.engine})")
    parser.add_argument("--no-fts5", action="store_true", help="leave SQLite FTS5 out")
    parser.add_argument("--no-tantivy", action="store_true", help="leave raw Tantivy out")
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS,
                        help=f"timed queries per class and highlight mode (default {DEFAULT_REPS})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"corpus seed (default {SEED})")
    parser.add_argument("--language", default=settings.language, help="pdfindex analysis language (default: settings)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build the indexes in DIR (new or empty) and keep them: DIR/pdfindex, DIR/fts5.sqlite3, "
                             "DIR/tantivy")
    parser.add_argument("--reuse", type=Path, metavar="DIR",
                        help="query the pdfindex index kept in DIR by --keep (built with the same --pages and --seed) "
                             "instead of building any index: pdfindex's query rows only, FTS5 and Tantivy left out")
    parser.add_argument("--hits", type=Path, metavar="FILE",
                        help="with --reuse: also write every query's top 10 with highlights (and some prefix, OR "
                             "and NOT variants) as JSON lines to FILE, to compare two versions of the code")
    args = parser.parse_args(argv)
    if args.hits is not None and args.reuse is None:
        parser.error("--hits needs --reuse")
    if args.reuse is not None and (args.keep is not None or not (args.reuse / "pdfindex").is_dir()):
        parser.error(f"--reuse {args.reuse}: no DIR/pdfindex kept there (and --keep cannot go with it)")
    if args.pages < 1 or args.batch < 1 or args.reps < 1 or not 1 <= args.shards <= config.MAX_SHARDS:
        parser.error(f"--pages, --batch and --reps must be at least 1, --shards from 1 to {config.MAX_SHARDS}")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: the directory is not empty")
    return args


def code_revision() -> str:
    """The git commit being measured, with "+changes" when indexer/ has uncommitted edits."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "pdfindex/indexer"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+changes in indexer/" if dirty else "")


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _median(values: Sequence[int]) -> float:
    return statistics.median(values) if values else 0.0


def run(args: argparse.Namespace, workdir: Path) -> int:
    say = print
    say(f"python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {platform.machine()}, "
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs; code at {code_revision()}; "
        f"load average {load_average()}")
    started = time.perf_counter()
    corpus = generate_corpus(args.pages, args.seed)
    say(f"corpus: {corpus.pages} pages in {len(corpus.documents)} documents ({corpus.cjk_pages} Chinese pages), "
        f"{corpus.words} English words, {len(corpus.rare)} planted rare terms; seed {corpus.seed}; "
        f"generated in {time.perf_counter() - started:.1f} s")
    classes = choose_queries(corpus, args.reps)
    for qc in classes:
        say(f"  {qc.label}: e.g. {', '.join(q.whoosh for q in qc.queries[1:4])}")

    writers = "one writer in this process" if args.shards == 1 else "a writer process per shard"
    say(f"\nindexing with pdfindex: {args.shards} shard(s), {writers}, batch_pages={args.batch} "
        f"per shard, language={args.language!r} ...")
    index, ours = build_pdfindex(corpus, workdir / "pdfindex", args.language, args.batch, args.shards, args.engine)
    say(f"  {ours.pages} pages in {ours.seconds:.1f} s = {ours.pages_per_second:.0f} pages/s, "
        f"{ours.size_bytes / 1e6:.1f} MB")
    say("querying pdfindex ...")
    ours_m = measure_pdfindex(index, classes)

    support = fts5_support()
    if args.no_fts5:
        support = Fts5Support(False, False, "FTS5 left out (--no-fts5)")
    say(f"\n{support.note}")
    fts_report: IndexReport | None = None
    fts_m: Measurements | None = None
    unicode61_cjk: list[int] = []
    if support.fts5:
        fts = Fts5Index(workdir / "fts5.sqlite3", support)
        try:
            say(f"indexing with FTS5: a transaction per {args.batch} pages ...")
            fts_report = fts.build(corpus, args.batch)
            say(f"  {fts_report.pages} pages in {fts_report.seconds:.1f} s = {fts_report.pages_per_second:.0f} "
                f"pages/s, {fts_report.size_bytes / 1e6:.1f} MB")
            say("querying FTS5 ...")
            fts_m = measure_fts5(fts, classes)
            cjk_class = next(qc for qc in classes if qc.key == "cjk")
            unicode61_cjk = [fts.count(q, "pages") for q in cjk_class.queries[1:]]
        finally:
            fts.close()

    tv_note = "raw Tantivy left out (--no-tantivy)" if args.no_tantivy else tantivy_support()
    tv_report: IndexReport | None = None
    tv_m: Measurements | None = None
    if tv_note is None:
        say(f"\nraw Tantivy: tantivy-py ({tantivy_version()})")
        say(f"indexing with Tantivy: a commit per {args.batch} pages, then its merges ...")
        tv = TantivyIndex(workdir / "tantivy")
        tv_report = tv.build(corpus, args.batch)
        say(f"  {tv_report.pages} pages in {tv_report.seconds:.1f} s = {tv_report.pages_per_second:.0f} pages/s, "
            f"{tv_report.size_bytes / 1e6:.1f} MB, {tv.index.searcher().num_segments} segment(s)")
        say("querying Tantivy ...")
        tv_m = measure_tantivy(tv, classes)
        del tv
    else:
        say(f"\n{tv_note}")

    say(f"\n{args.reps} different queries per class and mode after one warm-up query; top {LIMIT}; "
        f"{corpus.pages} pages\n")
    rows = build_rows(corpus, ours, ours_m, fts_report, fts_m, classes, tv_report, tv_m)
    say(format_table(rows, args.engine))
    say("")
    partial = sum(lat.partial for lat in ours_m.values())
    if partial:
        say(f"note: {partial} pdfindex searches hit the search time limit and returned partial results")
    if support.fts5:
        if support.trigram:
            say("FTS5 CJK queries ran on the trigram table (substring match over pages with CJK text); "
                f"on the unicode61 table the same queries match a median of {_median(unicode61_cjk):g} pages, "
                "since unicode61 keeps a whole run of Han characters between punctuation as one token.")
        else:
            say("FTS5 has no trigram tokenizer here: CJK queries ran on the unicode61 table, which keeps a "
                "whole run of Han characters as one token, so they only match a run that equals the query.")
        say("FTS5 latency excludes counting all matches (pdfindex's SearchResult.total includes it).")
    else:
        say(f"{support.note}: its column is n/a.")
    if tv_note is None:
        say("Tantivy ran its own analysis (en_stem; CJK as bigrams made here): a speed baseline, not an equal; "
            "its latency includes counting all matches, as pdfindex's does. × = pdfindex's time (p50 / p95), "
            "time or CPU per page, or bytes over Tantivy's.")
    else:
        say(f"{tv_note}: its columns are n/a.")
    say(f"load average at the end: {load_average()} (other processes on the machine add to wall-clock times)")
    if args.keep is not None:
        say(f"indexes kept in {args.keep}")
    missed = [r.metric for r in rows if r.verdict == "MISSED"]
    say(f"TARGETS: {'missed: ' + '; '.join(missed) if missed else 'all met'}")
    return 0


def hit_variants(classes: Sequence[QueryClass]) -> list[str]:
    """The queries whose hits ``--hits`` writes: every query of every class, and from
    them prefixes, ORs and NOTs (expanded terms and terms only some hits hold)."""
    queries = [q.whoosh for qc in classes for q in qc.queries]
    by_key = {qc.key: [q.whoosh for q in qc.queries] for qc in classes}
    queries += [f"{word[:4]}*" for word in by_key["rare"] + by_key["common"] if len(word) > 4]
    queries += [f"{a} OR {b}" for a, b in pairwise(by_key["rare"])]
    queries += [pair.replace(" ", " OR ") for pair in by_key["and"]]
    queries += [f"{pair.split()[0]} -{pair.split()[1]}" for pair in by_key["and"]]
    queries += [f"{cjk} {word}" for cjk, word in zip(by_key["cjk"], by_key["common"], strict=False)]
    return list(dict.fromkeys(queries))


def write_hits(index: PageIndex, queries: Sequence[str], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for query in queries:
            result = index.search(query, SearchOptions(limit=LIMIT, highlight=True))
            hits = [[h.path, h.page, h.snippet, [[span.start, span.end] for span in h.spans]] for h in result.hits]
            out.write(json.dumps({"query": query, "total": result.total, "hits": hits}, ensure_ascii=False) + "\n")


def run_reused(args: argparse.Namespace) -> int:
    """``--reuse``: the query classes on a kept index, as ``run`` measures them."""
    say = print
    say(f"python {platform.python_version()}, {os.cpu_count()} CPUs; code at {code_revision()} "
        f"(pdfindex from {Path(sys.modules[PageIndex.__module__].__file__ or '?').parents[2]}); "
        f"load average {load_average()}")
    corpus = generate_corpus(args.pages, args.seed)
    classes = choose_queries(corpus, args.reps)
    index = PageIndex(args.reuse / "pdfindex", None, create=False)
    pages = index.stats().pages
    if pages != corpus.pages:
        raise SystemExit(f"--reuse {args.reuse}: the index holds {pages} pages, the corpus of --pages {args.pages} "
                         f"--seed {args.seed} {corpus.pages}")
    say(f"querying the kept pdfindex index in {args.reuse} ({pages} pages) ...")
    started = time.perf_counter()
    ours_m = measure_pdfindex(index, classes)
    say(f"{args.reps} different queries per class and mode after one warm-up query; top {LIMIT}; "
        f"{time.perf_counter() - started:.1f} s\n")
    rows = query_rows(corpus, ours_m, None, classes)
    say(format_table(rows, stored_engine(args.reuse / "pdfindex") or "whoosh"))
    say("\nCPU per query, mean ms (highlights off / on): " + "; ".join(
        f"{qc.key} {ours_m[qc.key, False].cpu_seconds * 1000 / args.reps:.1f} / "
        f"{ours_m[qc.key, True].cpu_seconds * 1000 / args.reps:.1f}" for qc in classes))
    if args.hits is not None:
        queries = hit_variants(classes)
        write_hits(index, queries, args.hits)
        say(f"hits of {len(queries)} queries written to {args.hits}")
    say(f"load average at the end: {load_average()}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.reuse is not None:
        return run_reused(args)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        return run(args, args.keep)
    with tempfile.TemporaryDirectory(prefix="pdfindex-search-bench-") as tmp:
        return run(args, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
