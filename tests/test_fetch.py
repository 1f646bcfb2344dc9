"""fetch_url against a local HTTP server on loopback (no outside network is used)."""
import hashlib
import http.server
import socket
import threading
import zipfile

import pytest

from hmlkit.data import fetch as F

PAYLOAD = bytes(range(256)) * 97  # 24,832 bytes


class _Handler(http.server.BaseHTTPRequestHandler):
    log = []

    def log_message(self, *a):  # quiet
        pass

    def do_GET(self):
        _Handler.log.append((self.path, self.headers.get("Range")))
        body = PAYLOAD
        if self.path == "/missing.bin":
            self.send_error(404, "Not Found")
            return
        if self.path == "/fixture.zip":
            body = _Handler.zip_bytes
        rng = self.headers.get("Range")
        if rng and self.path != "/norange.bin":
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Length", str(len(body) - start))
            self.end_headers()
            self.wfile.write(body[start:])
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path == "/cut.bin":  # connection dies half way
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("Imagelist.txt", "a.jpg\nb.jpg\n")
    _Handler.zip_bytes = buf.getvalue()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_download_and_checksum(server, tmp_path):
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    p = F.fetch_url(server + "/data/file.bin", tmp_path, sha256=digest)
    assert p == tmp_path / "file.bin" and p.read_bytes() == PAYLOAD
    assert not (tmp_path / "file.bin.part").exists()
    n = len(_Handler.log)
    assert F.fetch_url(server + "/data/file.bin", tmp_path, sha256=digest) == p  # cached: no request
    assert len(_Handler.log) == n


def test_resume_from_partial_file(server, tmp_path):
    (tmp_path / "file.bin.part").write_bytes(PAYLOAD[:10000])
    _Handler.log.clear()
    p = F.fetch_url(server + "/file.bin", tmp_path, sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert _Handler.log == [("/file.bin", "bytes=10000-")]
    assert p.read_bytes() == PAYLOAD


def test_stale_oversized_part_is_downloaded_again(server, tmp_path):
    # the server answers 416 (nothing left past the part's end): a part longer than the file
    # is not the file, so it is dropped and the file downloaded whole
    (tmp_path / "file.bin.part").write_bytes(b"x" * (len(PAYLOAD) + 100))
    p = F.fetch_url(server + "/data/file.bin", tmp_path)
    assert p.read_bytes() == PAYLOAD and not (tmp_path / "file.bin.part").exists()


def test_whole_part_after_416_is_kept(server, tmp_path):
    (tmp_path / "file.bin.part").write_bytes(PAYLOAD)  # complete: the server has nothing more
    n = len(_Handler.log)
    assert F.fetch_url(server + "/data/file.bin", tmp_path).read_bytes() == PAYLOAD
    assert len(_Handler.log) == n + 1  # one ranged request, no second download


def test_server_ignoring_range_restarts(server, tmp_path):
    (tmp_path / "norange.bin.part").write_bytes(b"garbage" * 10)
    p = F.fetch_url(server + "/norange.bin", tmp_path)
    assert p.read_bytes() == PAYLOAD


def test_interrupted_then_resumed(server, tmp_path):
    with pytest.raises((ConnectionError, RuntimeError), match="call again to resume"):
        F.fetch_url(server + "/cut.bin", tmp_path)
    part = tmp_path / "cut.bin.part"
    assert 0 < part.stat().st_size < len(PAYLOAD)
    # the server sends the rest on a ranged request
    p = F.fetch_url(server + "/cut.bin", tmp_path, sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert p.read_bytes() == PAYLOAD


def test_checksum_mismatch_deletes_download(server, tmp_path):
    with pytest.raises(ValueError, match="checksum mismatch for file.bin"):
        F.fetch_url(server + "/file.bin", tmp_path, sha256="0" * 64)
    assert not (tmp_path / "file.bin").exists() and not (tmp_path / "file.bin.part").exists()


def test_http_error_and_no_network(server, tmp_path):
    with pytest.raises(RuntimeError, match="HTTP 404"):
        F.fetch_url(server + "/missing.bin", tmp_path)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(ConnectionError, match=r"cannot reach .*No network\?.*place it at"):
        F.fetch_url(f"http://127.0.0.1:{port}/x.zip", tmp_path, timeout=5)


def test_fetch_nuswide_unpacks_zip_parts(server, tmp_path):
    root = F.fetch_nuswide(tmp_path, parts=("ImageList",), urls={"ImageList": server + "/fixture.zip"})
    assert (root / "ImageList" / "Imagelist.txt").read_text() == "a.jpg\nb.jpg\n"
    with pytest.raises(RuntimeError, match="unrar"):
        F.unpack(F.fetch_url(server + "/x/Low_Level_Features.rar", tmp_path), tmp_path)


def test_cache_dir_and_official_urls(monkeypatch, tmp_path):
    monkeypatch.setenv("HMLKIT_DATA_DIR", str(tmp_path))
    assert F.data_cache_dir() == tmp_path
    monkeypatch.delenv("HMLKIT_DATA_DIR")
    assert F.data_cache_dir().parts[-2:] == ("data", "cache")
    assert F._filename_from_url(F.OFFICIAL_ARCHIVES["corel16k"][0]) == "corel16k.rar"
    assert all(u.startswith("https://") for u, _ in F.OFFICIAL_ARCHIVES.values())


def test_fetch_corel5k_from_local_url(tmp_path):
    url, digest = F.OFFICIAL_ARCHIVES["corel5k"]
    assert F._filename_from_url(url) == "corel5k.rar" and digest is None  # no published digest
    src = tmp_path / "mirror" / "corel5k.rar"
    src.parent.mkdir()
    src.write_bytes(PAYLOAD)
    p = F.fetch_corel5k(tmp_path / "cache", url=src.as_uri(), sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert p == tmp_path / "cache" / "corel5k" / "corel5k.rar" and p.read_bytes() == PAYLOAD
    with pytest.raises(ValueError, match="checksum mismatch for corel5k.rar"):
        F.fetch_corel5k(tmp_path / "other", url=src.as_uri(), sha256="0" * 64)
