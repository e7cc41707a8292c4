"""The online paths, end to end, against a local HTTP server on the loopback address serving
archives made from the mirror: download, checksum, unpack, load — and the failures (a server
error, a connection cut mid-file, a checksum mismatch, a broken archive), each a clear error
that leaves no half-written dataset behind."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from grainlab.data import load_dataset
from grainlab.data.download import DownloadFailed
from grainlab.data.registry import REGISTRY

pytestmark = pytest.mark.mirror


def _scifact_zip(mirror: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            bundle.write(mirror / "beir_scifact" / name, f"scifact/{name}")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def server(mirror):
    files = {
        "/scifact.zip": _scifact_zip(mirror),
        "/dev-v1.1.json": (mirror / "squad_v1.1_dev" / "dev-v1.1.json").read_bytes(),
        "/nq-open-oracle.jsonl.gz": (mirror / "lost_in_the_middle" / "qa_data" / "nq-open-oracle.jsonl.gz").read_bytes(),
        "/COVID-QA.json": (mirror / "covid_qa" / "200423_covidQA.json").read_bytes(),
        "/not-a-zip.zip": b"<html>maintenance</html>",
        **{f"/chroma/{name}": (mirror / "chroma_chunking_evaluation" / name).read_bytes()
           for name in REGISTRY["chroma_chunking_eval"].files},
    }
    files["/chroma-edited/questions_df.csv"] = files["/chroma/questions_df.csv"].replace(b"Biden", b"Bidem", 1)
    files.update({k.replace("/chroma/", "/chroma-edited/"): v for k, v in files.items()
                  if k.startswith("/chroma/") and not k.endswith(".csv")})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path == "/error.zip":
                self.send_error(503, "Service Unavailable")
                return
            body = files.get(self.path.removesuffix("?cut"))
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2] if self.path.endswith("?cut") else body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", files
    httpd.shutdown()


@pytest.fixture
def online(tmp_path, monkeypatch):
    """No mirror, an empty download cache."""
    monkeypatch.setenv("GRAINLAB_MIRROR", "")
    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "datasets"


def _serve(monkeypatch, name: str, url: str, **changes) -> None:
    monkeypatch.setitem(REGISTRY, name, dataclasses.replace(REGISTRY[name], url=url, **changes))


def _left_behind(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_beir_zip_downloads_checks_unpacks_and_loads(server, online, monkeypatch):
    base, files = server
    _serve(monkeypatch, "scifact", f"{base}/scifact.zip", md5=hashlib.md5(files["/scifact.zip"]).hexdigest())
    data = load_dataset("scifact")
    assert (len(data.corpus), len(data.queries)) == (5183, 300)
    assert _left_behind(online) == ["beir_scifact", "corpus.jsonl", "qrels", "queries.jsonl", "test.tsv"]
    assert len(load_dataset("scifact", allow_download=False).corpus) == 5183  # found again, no download


def test_single_file_datasets_download_and_load(server, online, monkeypatch):
    base, _ = server
    _serve(monkeypatch, "squad_dev", f"{base}/dev-v1.1.json")  # the registry's md5 is SQuAD's published one
    assert len(load_dataset("squad_dev").queries) == 10570
    _serve(monkeypatch, "nq_open_oracle", f"{base}/nq-open-oracle.jsonl.gz")
    assert len(load_dataset("nq_open_oracle").queries) == 2655
    _serve(monkeypatch, "covid_qa", f"{base}/COVID-QA.json")  # no published checksum: release counts decide
    assert len(load_dataset("covid_qa").corpus) == 98


@pytest.mark.parametrize("path, changes, message", [
    ("/error.zip", {}, "answered HTTP 503.*set GRAINLAB_MIRROR=/path/to/mirror"),
    ("/scifact.zip?cut", {}, r"(stopped|failed) after [\d,]+ (of [\d,]+ )?bytes"),
    ("/scifact.zip", {"md5": "0" * 32}, "not the published 0000"),
    ("/not-a-zip.zip", {"md5": ""}, "is not a readable zip"),
])
def test_failed_downloads_are_clear_and_leave_nothing(server, online, monkeypatch, path, changes, message):
    base, _ = server
    _serve(monkeypatch, "scifact", f"{base}{path}", **changes)
    with pytest.raises(DownloadFailed, match=message):
        load_dataset("scifact")
    assert [p for p in _left_behind(online) if p != "beir_scifact"] == [] and not (online / "beir_scifact").exists()


def test_an_interrupted_single_file_download_leaves_nothing(server, online, monkeypatch):
    base, _ = server
    _serve(monkeypatch, "squad_dev", f"{base}/dev-v1.1.json?cut")
    with pytest.raises(DownloadFailed, match=r"(stopped|failed) after [\d,]+"):
        load_dataset("squad_dev")
    assert _left_behind(online) == ["squad_v1.1_dev"] and not any((online / "squad_v1.1_dev").iterdir())


def test_a_folder_of_files_downloads_checked_by_sha256(server, online, monkeypatch):
    base, _ = server
    _serve(monkeypatch, "chroma_chunking_eval", f"{base}/chroma")
    data = load_dataset("chroma_chunking_eval")
    assert (len(data.corpus), len(data.queries)) == (5, 472)
    left = _left_behind(online)
    assert "chroma_chunking_evaluation" in left and "chatlogs.md" in left and not any(p.startswith(".") for p in left)
    _serve(monkeypatch, "chroma_chunking_eval", f"{base}/chroma-edited")
    monkeypatch.setenv("GRAINLAB_CACHE", str(online.parent / "other"))
    with pytest.raises(DownloadFailed, match="not the recorded 3ab39018"):
        load_dataset("chroma_chunking_eval")
    assert not (online.parent / "other" / "datasets" / "chroma_chunking_evaluation").exists()
