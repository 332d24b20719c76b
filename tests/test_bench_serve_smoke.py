"""Keeps bench/serve_load.py from rotting: a tiny run against the real server and
the raw Tantivy peer (a 200-page search index, two short levels, two page images)
must report every level and class of both, count no failed request, and leave no
server behind, also when it is interrupted; the peer must answer every planted
rare term with exactly its pages; a wrong answer, an error status and a dead server
must count as failures; bad arguments and an index that is not the bench corpus are
refused in one line. The figures themselves are not judged."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from bench import serve_load
from tests.paths import ROOT

#: The bench as the README runs it, from the project root (``_env`` puts the root on
#: the path for a run in another working directory).
BENCH = ("-m", "bench.serve_load")
CLASSES = ["rare", "common", "phrase"]
VERDICTS = {"met", "MISSED", "not measured"}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """The bench imported as a module."""
    return serve_load


@pytest.fixture(scope="module")
def kept(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as ``search_speed.py --keep DIR --pages 200`` leaves it: DIR/pdfindex."""
    keep = tmp_path_factory.mktemp("kept")
    corpus = bench.search_speed.generate_corpus(200, bench.search_speed.SEED)
    bench.search_speed.build_pdfindex(corpus, keep / "pdfindex", "en", 100)
    return keep


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PDFINDEX_")}, "PYTHONPATH": str(ROOT)}


def _server_pids(stderr: str) -> list[int]:
    return [int(m.group(1)) for m in re.finditer(r"^server pid (\d+) on port \d+", stderr, re.M)]


def _gone(pid: int) -> bool:
    """Neither the server nor anything of its process group is left."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


# ---- a whole small run ----------------------------------------------------------------

@pytest.mark.slow  # three real servers, a real ingest: about 15 s
def test_small_run_reports_every_level_and_class_and_no_failure(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, *BENCH, "--pages", "200", "--seconds", "0.5", "--clients", "1,3", "--images", "2",
         "--json", str(out)],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))

    assert report["failed"] == 0 and report["warmup"]["failed"] == 0
    assert report["index"]["pages"] == 200 and report["index"]["built_seconds"] > 0
    assert report["mix"] == pytest.approx({"rare": 0.7, "common": 0.2, "phrase": 0.1})
    assert [lv["clients"] for lv in report["levels"]] == [1, 3]
    for lv in report["levels"]:
        assert lv["failed"] == 0 and lv["errors"] == [], lv["errors"]
        assert lv["requests"] > 0 and lv["requests_per_second"] > 0 and lv["seconds"] >= 0.5
        assert [c["key"] for c in lv["classes"]] == CLASSES
        assert sum(c["requests"] for c in lv["classes"]) == lv["requests"] == lv["overall"]["requests"]
        for c in [lv["overall"], *lv["classes"]]:
            if c["requests"]:
                assert 0 < c["p50_ms"] <= c["p95_ms"] and c["took_p50_ms"] >= 0, c
        assert min(lv["server_cores"], lv["client_cores"], lv["other_cores"]) >= 0
        assert lv["server_cores"] > 0  # the server's own process group was measured, not just this one
    assert lv["classes"][0]["requests"] > 0  # 70 % rare: a level without one would be a broken mix

    images = report["images"]
    if images["status"] == "endpoint missing":
        pytest.fail("the server describes no page-image endpoint")  # it exists since issue 10's commit 080722a
    assert images["status"] == "measured" and images["route"] == "/api/documents/{hash}/pages/{n}.png"
    for name in ("rendered", "cached"):
        ip = images[name]
        assert ip["images"] == 2 and ip["failed"] == 0 and ip["errors"] == [], ip
        assert 0 < ip["p50_ms"] <= ip["p95_ms"] <= ip["max_ms"]
    assert images["distinct_queries"] == 2

    targets = {t["name"]: t["verdict"] for t in report["targets"]}
    assert len(targets) == 3 and set(targets.values()) <= VERDICTS
    assert [v for k, v in targets.items() if "16 clients" in k] == ["not measured"] * 2  # 16 was not run
    assert "| clients | queries | requests | req/s | p50 ms | p95 ms |" in done.stdout
    assert re.search(r"^TARGETS: ", done.stdout, re.M), done.stdout

    peer = report["tantivy"]
    assert peer is not None and peer["built_seconds"] > 0 and peer["warmup"]["failed"] == 0
    assert [lv["clients"] for lv in peer["levels"]] == [1, 3]
    for lv in peer["levels"]:  # the same checks as pdfindex's: a rare term's exact page count, no error
        assert lv["failed"] == 0 and lv["errors"] == [], lv["errors"]
        assert lv["requests"] > 0 and lv["requests_per_second"] > 0 and lv["server_cores"] > 0
        assert [c["key"] for c in lv["classes"]] == CLASSES
        for c in [lv["overall"], *lv["classes"]]:
            if c["requests"]:
                assert 0 < c["p50_ms"] <= c["p95_ms"] and c["took_p50_ms"] >= 0, c
        assert lv["classes"][0]["requests"] > 0
    assert "| clients | queries | pdfindex req/s | Tantivy req/s | × |" in done.stdout
    assert len(re.findall(r"^\| [13] \| (all queries|rare term|common term|phrase of two common words) \| [\d.]+ \| "
                          r"[\d.]+ \| ", done.stdout, re.M)) >= 16, done.stdout  # both tables, every level and class
    pids = _server_pids(done.stderr)
    assert len(pids) == 3 and all(_gone(pid) for pid in pids), done.stderr  # pdfindex, Tantivy, page images


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 128 + signal.SIGTERM)])
def test_an_interrupted_run_stops_its_server(tmp_path: Path, kept: Path, signum: int, status: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, *BENCH, "--index", str(kept), "--seconds", "60", "--clients", "4", "--images", "0"],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        seen = ""
        while "measuring 4 client(s)" not in seen:
            line = proc.stderr.readline()
            assert line, f"the bench ended early: {seen}"
            seen += line
        time.sleep(0.5)  # the clients are sending
        proc.send_signal(signum)
        stdout, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == status, f"{stdout}\n{seen}{rest}"
    assert "Traceback" not in rest, rest
    pids = _server_pids(seen)
    assert len(pids) == 2 and all(_gone(pid) for pid in pids), seen  # pdfindex and raw Tantivy


# ---- what counts as a failure ----------------------------------------------------------

def test_wrong_answers_error_statuses_and_a_dead_server_are_failures(bench: ModuleType, kept: Path,
                                                                     tmp_path: Path) -> None:
    corpus = bench.search_speed.generate_corpus(200, bench.search_speed.SEED)
    plan = bench.make_plan(corpus, {"rare": 1.0})
    term, pages = next(iter(plan.rare_pages.items()))
    wrong = bench.Plan(plan.shares, plan.labels, plan.queries, plan.warmup, {term: pages + 1})
    with bench.serve(kept / "pdfindex", tmp_path / "server.log") as server, \
            bench.httpx.Client(base_url=server.url, timeout=10, trust_env=False) as client:
        right = bench.search_once(client, plan, "rare", term)
        wrong_count = bench.search_once(client, wrong, "rare", term)
        bad_query = bench.search_once(client, plan, "common", "free:culture")
        nothing = bench.search_once(client, plan, "phrase", '"zzqx qqzx"')
        pid = server.pid
    assert right.error is None and right.ms > 0 and right.took_ms is not None
    assert wrong_count.error == f"wrong answer for rare term {term!r}: {pages} pages, planted on {pages + 1}"
    assert bad_query.error is not None and bad_query.error.startswith("HTTP 400 for 'free:culture': ")
    assert nothing.error == "wrong answer for '\"zzqx qqzx\"': no page found"
    assert _gone(pid)
    with bench.httpx.Client(base_url=server.url, timeout=2, trust_env=False) as client:
        dead = bench.search_once(client, plan, "rare", term)
    assert dead.error is not None and dead.error.startswith("ConnectError")
    stats = bench.class_stats("rare", "rare term", [right, wrong_count, dead])
    assert (stats.requests, stats.failed) == (3, 2) and stats.p50_ms == right.ms  # failures are not timed


def test_the_tantivy_peer_answers_exactly_and_its_failures_count(bench: ModuleType, tmp_path: Path) -> None:
    """The baseline's figures mean something only if it answers the same requests
    right: every planted rare term with its exact pages, every class with pages."""
    corpus = bench.search_speed.generate_corpus(200, bench.search_speed.SEED)
    plan = bench.make_plan(corpus, {"rare": 1.0, "common": 1.0, "phrase": 1.0, "and": 1.0, "cjk": 1.0})
    root, seconds = bench.build_tantivy(tmp_path, corpus, 100)
    assert seconds > 0
    term, pages = next(iter(plan.rare_pages.items()))
    wrong = bench.Plan(plan.shares, plan.labels, plan.queries, plan.warmup, {term: pages + 1})
    with bench.serve(root, tmp_path / "tantivy.log", engine="tantivy") as server, \
            bench.httpx.Client(base_url=server.url, timeout=10, trust_env=False) as client:
        rare = [bench.search_once(client, plan, "rare", t) for t in plan.rare_pages]
        others = [bench.search_once(client, plan, k, q) for k in ("common", "phrase", "and", "cjk")
                  for q in plan.queries[k][:5]]
        wrong_count = bench.search_once(client, wrong, "rare", term)
        nothing = bench.search_once(client, plan, "phrase", '"zzqx qqzx"')
        body = client.get("/api/search", params={"q": term}).json()
        pid = server.pid
    assert len(rare) == len(corpus.rare) and [s.error for s in rare + others if s.error] == []
    assert all(s.ms > 0 and s.took_ms is not None for s in rare + others)
    assert wrong_count.error == f"wrong answer for rare term {term!r}: {pages} pages, planted on {pages + 1}"
    assert nothing.error == "wrong answer for '\"zzqx qqzx\"': no page found"
    assert {(h["doc_hash"], h["page"]) for h in body["hits"]} == set(corpus.rare[term])
    assert all(f"<b>{term.capitalize()}</b>" in h["snippet"] for h in body["hits"]), body["hits"]
    assert _gone(pid)


# ---- the kept index --------------------------------------------------------------------

def test_kept_index_is_found_in_its_folder_and_checked_against_the_corpus(bench: ModuleType, kept: Path) -> None:
    for given in (kept, kept / "pdfindex"):
        root, corpus, info = bench.open_kept_index(given, bench.search_speed.SEED)
        assert root == kept / "pdfindex" and corpus.pages == info.pages == 200 and info.built_seconds is None
    with pytest.raises(bench.BenchError, match=r"is not search_speed's corpus of 200 pages with seed 7 "):
        bench.open_kept_index(kept, 7)


def test_a_missing_index_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, *BENCH, "--index", str(tmp_path / "none"), "--images", "0"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"serve_load: error: --index {tmp_path / 'none'}: no index there "
        "(make one with bench/search_speed.py --keep DIR)")


# ---- arguments --------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    (["--clients", "0"], "each client count must be 1-64"),
    (["--clients", "65"], "each client count must be 1-64"),
    (["--clients", "1,-4"], "each client count must be 1-64"),
    (["--clients", "1,x"], "expected client counts"),
    (["--clients", ","], "each client count must be 1-64"),
    (["--clients", "1,2,3,4,5,6,7,8,9"], "at most 8 levels"),
    (["--seconds", "0"], "seconds per level must be 0.5-300"),
    (["--seconds", "nan"], "seconds per level must be 0.5-300"),
    (["--seconds", "inf"], "seconds per level must be 0.5-300"),
    (["--seconds", "1e9"], "seconds per level must be 0.5-300"),
    (["--mix", "rare=-1"], "weights >= 0"),
    (["--mix", "rare=nan"], "weights >= 0"),
    (["--mix", "rare=inf,common=1"], "weights >= 0"),
    (["--mix", "bogus=1"], "each class once"),
    (["--mix", "rare"], "each class once"),
    (["--mix", "rare=1,rare=2"], "each class once"),
    (["--mix", "rare=0,common=0"], "add up to nothing"),
    (["--images", "-1"], "images must be 0-400"),
    (["--images", "401"], "images must be 0-400"),
    (["--pages", "0"], "--pages must be at least 1"),
    (["--pages", "10", "--index", "x"], "not allowed with argument"),
    (["--json", "/nonexistent-dir/report.json"], "no folder /nonexistent-dir"),
])
def test_bad_arguments_are_refused(bench: ModuleType, capsys: pytest.CaptureFixture[str], argv: list[str],
                                   message: str) -> None:
    with pytest.raises(SystemExit) as info:
        bench.parse_args(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_mix_is_normalised_and_zero_weights_dropped(bench: ModuleType) -> None:
    assert bench.parse_args(["--mix", "rare=3,common=1,phrase=0"]).mix == {"rare": 0.75, "common": 0.25}
    args = bench.parse_args([])
    assert args.clients == (1, 4, 16) and args.seconds == 10 and args.images == 40 and args.pages is None
    assert not args.no_tantivy and bench.parse_args(["--no-tantivy"]).no_tantivy
    assert bench.parse_args(["--clients", "4,4,1"]).clients == (4, 1)
