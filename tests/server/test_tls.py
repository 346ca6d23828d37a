"""``spaseq serve --certfile --keyfile``: HTTPS with a self-signed certificate made here (the
``cryptography`` package), a real client verifying the server against it; a client that does
not trust it, or speaks plain HTTP, gets nothing; bad TLS options are user errors said before
anything listens."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from spaseq.engine.errors import UsageError
from spaseq.engine.server.config import ServerConfig

from .conftest import start_server


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (its subjectAltName) and its key, PEM files in ``directory``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "spaseq test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    certfile, keyfile = directory / "cert.pem", directory / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return certfile, keyfile


def test_https_with_a_certificate_the_client_verifies(tmp_path: Path) -> None:
    certfile, keyfile = self_signed(tmp_path)
    srv = start_server("--certfile", str(certfile), "--keyfile", str(keyfile))
    try:
        assert srv.url.startswith("https://127.0.0.1:")  # the "listening on" line says https
        trusting = ssl.create_default_context(cafile=str(certfile))
        with httpx.Client(verify=trusting, timeout=10) as client:
            r = client.post(f"{srv.url}/sparql", content="ASK {}", headers={"Content-Type": "application/sparql-query"})
            assert r.status_code == 200 and r.json()["boolean"] is True
            assert client.get(f"{srv.url}/queries").json() == []
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(f"{srv.url}/queries", timeout=10)  # the system's CAs do not know it
        with pytest.raises(httpx.HTTPError):
            httpx.get(srv.url.replace("https://", "http://") + "/queries", timeout=10)
    finally:
        assert srv.stop() == 0


@pytest.mark.parametrize("certfile, keyfile, said", [
    ("cert.pem", None, "TLS needs both --certfile and --keyfile"),
    ("cert.pem", "missing.pem", "--keyfile .*missing.pem: no such file"),
    ("cert.pem", "cert.pem", "not a certificate and its private key"),
])
def test_bad_tls_options_are_refused_before_listening(tmp_path: Path, certfile: str, keyfile: str | None,
                                                      said: str) -> None:
    """Said before anything listens (``serve`` checks the config first: exit status 2, one line,
    as test_security's non-loopback case shows for every such check)."""
    self_signed(tmp_path)
    config = ServerConfig(certfile=str(tmp_path / certfile), keyfile=keyfile and str(tmp_path / keyfile))
    with pytest.raises(UsageError, match=said):
        config.check()
