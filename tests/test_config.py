"""Settings from the environment: precedence, parsing, errors naming the variable."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pdfindex import config
from pdfindex.config import Settings, SettingsError


def test_defaults_with_home_only() -> None:
    settings = config.load({"HOME": "/home/ann"})
    assert settings.index_dir == Path("/home/ann/.local/share/pdfindex/index")
    assert (settings.language, settings.search_timeout, settings.batch_pages) == ("en", 5.0, 2000)
    assert (settings.broker_url, settings.result_backend) == ("", "")
    assert isinstance(settings, Settings)


def test_index_dir_precedence() -> None:
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "/xdg/data", "PDFINDEX_INDEX_DIR": "/srv/pdfindex"}
    assert config.load(env).index_dir == Path("/srv/pdfindex")
    del env["PDFINDEX_INDEX_DIR"]
    assert config.load(env).index_dir == Path("/xdg/data/pdfindex/index")
    del env["XDG_DATA_HOME"]
    assert config.load(env).index_dir == Path("/home/ann/.local/share/pdfindex/index")


def test_empty_variables_count_as_unset() -> None:
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "", "PDFINDEX_INDEX_DIR": "", "PDFINDEX_LANGUAGE": "",
           "PDFINDEX_SEARCH_TIMEOUT": "", "PDFINDEX_BATCH_PAGES": ""}
    settings = config.load(env)
    assert settings.index_dir == Path("/home/ann/.local/share/pdfindex/index")
    assert (settings.language, settings.search_timeout, settings.batch_pages) == ("en", 5.0, 2000)


def test_home_fallback_without_home_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.load({}).index_dir == tmp_path / ".local" / "share" / "pdfindex" / "index"


def test_index_dir_tilde_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.load({"HOME": str(tmp_path), "PDFINDEX_INDEX_DIR": "~/idx"}).index_dir == tmp_path / "idx"


def test_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PDFINDEX_INDEX_DIR", str(tmp_path / "ix"))
    monkeypatch.setenv("PDFINDEX_LANGUAGE", "DE")
    settings = config.load()
    assert settings.index_dir == tmp_path / "ix" and settings.language == "de"


@pytest.mark.parametrize(("raw", "language"), [("EN", "en"), (" None ", "none"), ("De", "de"), ("fr\n", "fr")])
def test_language_is_lowercased_and_stripped(raw: str, language: str) -> None:
    assert config.load({"HOME": "/h", "PDFINDEX_LANGUAGE": raw}).language == language


def test_numbers_parse() -> None:
    settings = config.load({"HOME": "/h", "PDFINDEX_SEARCH_TIMEOUT": "2.5", "PDFINDEX_BATCH_PAGES": "1000"})
    assert settings.search_timeout == 2.5 and settings.batch_pages == 1000
    settings = config.load({"HOME": "/h", "PDFINDEX_SEARCH_TIMEOUT": "1", "PDFINDEX_BATCH_PAGES": " 7 "})
    assert settings.search_timeout == 1.0 and settings.batch_pages == 7
    assert isinstance(settings.search_timeout, float) and isinstance(settings.batch_pages, int)


@pytest.mark.parametrize(("name", "raw"), [
    ("PDFINDEX_SEARCH_TIMEOUT", "soon"),
    ("PDFINDEX_SEARCH_TIMEOUT", "0"),
    ("PDFINDEX_SEARCH_TIMEOUT", "-1"),
    ("PDFINDEX_SEARCH_TIMEOUT", "5s"),
    ("PDFINDEX_BATCH_PAGES", "many"),
    ("PDFINDEX_BATCH_PAGES", "1.5"),
    ("PDFINDEX_BATCH_PAGES", "0"),
    ("PDFINDEX_BATCH_PAGES", "-10"),
])
def test_bad_numbers_raise_settings_error_naming_the_variable(name: str, raw: str) -> None:
    with pytest.raises(SettingsError) as info:
        config.load({"HOME": "/h", name: raw})
    assert name in str(info.value)
    assert raw in str(info.value)
    assert isinstance(info.value, ValueError)


def test_nan_timeout_is_rejected() -> None:
    with pytest.raises(SettingsError, match="PDFINDEX_SEARCH_TIMEOUT"):
        config.load({"HOME": "/h", "PDFINDEX_SEARCH_TIMEOUT": "nan"})


def test_relative_xdg_data_home_is_ignored() -> None:
    settings = config.load({"HOME": "/home/ann", "XDG_DATA_HOME": "relative/data"})
    assert settings.index_dir == Path("/home/ann/.local/share/pdfindex/index")


def test_result_backend_defaults_to_broker_url() -> None:
    settings = config.load({"HOME": "/h", "PDFINDEX_BROKER_URL": " redis://127.0.0.1:6379/0 "})
    assert settings.broker_url == "redis://127.0.0.1:6379/0"
    assert settings.result_backend == "redis://127.0.0.1:6379/0"
    settings = config.load({"HOME": "/h", "PDFINDEX_BROKER_URL": "redis://broker/0",
                            "PDFINDEX_RESULT_BACKEND": "redis://results/1"})
    assert (settings.broker_url, settings.result_backend) == ("redis://broker/0", "redis://results/1")
    settings = config.load({"HOME": "/h", "PDFINDEX_RESULT_BACKEND": "redis://results/1"})
    assert (settings.broker_url, settings.result_backend) == ("", "redis://results/1")
    settings = config.load({"HOME": "/h", "PDFINDEX_BROKER_URL": "redis://broker/0", "PDFINDEX_RESULT_BACKEND": " "})
    assert settings.result_backend == "redis://broker/0"


def test_settings_are_frozen() -> None:
    settings = config.load({"HOME": "/h"})
    with pytest.raises(AttributeError):
        settings.language = "de"  # type: ignore[misc]


# ---- issue 7: roots, password file, broker scheme, signing ------------------------------------

def test_roots_are_absolute_normalized_and_deduplicated() -> None:
    raw = os.pathsep.join(["/srv/pdfs", "", "/srv/pdfs/", "/home/ann/../ann/docs", " "])
    assert config.load({"HOME": "/h", "PDFINDEX_ROOTS": raw}).roots == (Path("/srv/pdfs"), Path("/home/ann/docs"))
    assert config.load({"HOME": "/h"}).roots == ()


@pytest.mark.parametrize("raw", ["docs", "/srv/pdfs" + os.pathsep + "relative", "./x", "/srv/a\0b"])
def test_relative_or_nul_roots_are_refused(raw: str) -> None:
    with pytest.raises(SettingsError, match="PDFINDEX_ROOTS"):
        config.load({"HOME": "/h", "PDFINDEX_ROOTS": raw})


def test_password_file_must_be_absolute() -> None:
    assert config.load({"HOME": "/h", "PDFINDEX_PASSWORD_FILE": "/etc/pdfindex/pw"}).password_file == \
        Path("/etc/pdfindex/pw")
    assert config.load({"HOME": "/h"}).password_file is None
    with pytest.raises(SettingsError, match="PDFINDEX_PASSWORD_FILE='pw' must be an absolute path"):
        config.load({"HOME": "/h", "PDFINDEX_PASSWORD_FILE": "pw"})


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "rediss://:pw@broker:6380/1?ssl_cert_reqs=required",
                                 "redis://ingest:pw@broker/0", "unix:///run/redis.sock?db=2", "redis://"])
def test_redis_broker_urls_are_accepted(url: str) -> None:
    assert config.load({"HOME": "/h", "PDFINDEX_BROKER_URL": url}).broker_url == url


@pytest.mark.parametrize(("url", "problem"), [
    ("amqp://guest:s3cret@rabbit//", "the broker must be Redis"),
    ("sqs://AKIA:s3cret@", "the broker must be Redis"),
    ("127.0.0.1:6379", "the broker must be Redis"),
    ("redis://:s3cret@host:port/0", "is not a valid URL"),
    ("redis://:s3cret@host:99999/0", "is not a valid URL"),
    ("unix://", "needs the socket path"),
])
def test_bad_broker_urls_name_the_variable_and_hide_the_password(url: str, problem: str) -> None:
    with pytest.raises(SettingsError) as info:
        config.load({"HOME": "/h", "PDFINDEX_BROKER_URL": url})
    message = str(info.value)
    assert message.startswith("PDFINDEX_BROKER_URL=") and problem in message
    assert "s3cret" not in message


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://ingest:s3cret@broker:6380/0", "redis://ingest:***@broker:6380/0"),
    ("rediss://:s3cret@[::1]/0?ssl_cert_reqs=required", "rediss://:***@[::1]/0?ssl_cert_reqs=required"),
    ("redis://broker/0", "redis://broker/0"),
    ("redis://:s3c@ret@host:bad/0", "redis://***@host:bad/0"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert config.redact_url(url) == shown


def test_signing_needs_all_three_settings() -> None:
    env = {"HOME": "/h", "PDFINDEX_SIGNING_KEY": "/k/worker.key", "PDFINDEX_SIGNING_CERT": "/k/worker.pem",
           "PDFINDEX_SIGNING_CERT_STORE": "/k/trusted/*.pem"}
    settings = config.load(env)
    assert settings.signing and settings.signing_key == Path("/k/worker.key")
    assert settings.signing_cert == Path("/k/worker.pem") and settings.signing_cert_store == "/k/trusted/*.pem"
    assert not config.load({"HOME": "/h"}).signing
    for name in ("PDFINDEX_SIGNING_CERT", "PDFINDEX_SIGNING_CERT_STORE"):
        partial = {k: v for k, v in env.items() if k != name}
        with pytest.raises(SettingsError, match=f"{name} not set"):
            config.load(partial)
    with pytest.raises(SettingsError, match="PDFINDEX_SIGNING_CERT_STORE='trusted' must be an absolute"):
        config.load({**env, "PDFINDEX_SIGNING_CERT_STORE": "trusted"})
