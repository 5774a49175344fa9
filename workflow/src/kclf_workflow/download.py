"""Verified downloads of public data: cache, then local mirror, then the URL.

One mechanism for every public file the workflow needs (README, "Reproducibility"):

1. **cache** -- ``cache_dir/filename`` is used as is when its SHA-256 matches;
2. **mirror** -- a local directory holding copies of the public files (``../shared/data``
   is one); the file ``mirror/mirror_relpath`` is verified, then copied into the cache,
   and the URL is never contacted;
3. **URL** -- downloaded by :mod:`pooch` to a temporary file, verified, then moved into
   the cache.

A checksum mismatch deletes the downloaded file and raises :class:`ChecksumError`
naming the URL (or mirror path), the expected and the actual hash, and what became of the
files: a download is deleted, a mirror's file is never changed, and a cached copy that
did not match (deleted before the mirror or the URL is tried) is named.  A mirror that is
absent or lacks the file falls through to the URL; when the URL cannot be reached
either, :class:`DownloadError` says so in one line naming the URL and the missing
mirror path.  Both errors derive from :class:`ValueError`.

Some public files' hashes cannot be known in advance.  Passing ``sha256=None`` (or the
string ``"print"``) explicitly skips the check: the file's SHA-256 is computed and logged as a
warning by this module's logger (in a workflow job: the rule's log; in a session without
logging configured Python writes warnings to standard error), so it can be pasted into
the config for the next run.
There is no default: every caller states a hash or asks for it to be printed.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pooch

from .files import atomic_write, default_file_mode, file_hash, file_sha256

__all__ = [
    "ChecksumError",
    "DownloadError",
    "check_md5",
    "fetch",
    "untar",
    "unzip",
]

logger = logging.getLogger(__name__)

#: Seconds to wait for the server to answer (connect and each read).
TIMEOUT = 60

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class DownloadError(ValueError):
    """A file could not be obtained (server unreachable, HTTP error, mirror missing)."""


class ChecksumError(DownloadError):
    """A file's SHA-256 does not match the expected one; ``note`` says what became of the
    file and of the cache (which copy was deleted, which was kept)."""

    def __init__(self, source, expected, actual, note):
        self.source, self.expected, self.actual = str(source), expected, actual
        super().__init__(
            f"checksum mismatch for {self.source}: expected sha256 {expected}, got {actual} "
            f"({note})"
        )


def _cache_note(target, stale):
    """The end of a checksum message: nothing is cached at ``target``, and whether a
    mismatching cached copy there was deleted (``stale``)."""
    if stale:
        return f"the cached copy {target}, which did not match either, was deleted"
    return f"nothing is cached at {target}"


def check_md5(path, md5, source):
    """Check ``path`` against the published ``md5``; a mismatch deletes the file and raises
    :class:`DownloadError` naming ``source``, the expected and the actual hash."""
    h = file_hash(path, "md5")
    if h.hexdigest() != md5.lower():
        Path(path).unlink()
        raise DownloadError(
            f"checksum mismatch for {source}: expected md5 {md5}, got {h.hexdigest()} "
            f"(deleted {path})"
        )
    return Path(path)


def untar(members=None, extract_dir=None):
    """Processor for :func:`fetch` that unpacks a tar archive next to it.

    Returns :class:`pooch.Untar`; ``fetch`` then returns the list of extracted paths.
    ``extract_dir`` is relative to the cache directory (default ``<filename>.untar``).
    """
    return pooch.Untar(members=members, extract_dir=extract_dir)


def unzip(members=None, extract_dir=None):
    """Processor for :func:`fetch` that unpacks a zip archive (see :func:`untar`)."""
    return pooch.Unzip(members=members, extract_dir=extract_dir)


def _check_sha256(sha256):
    """Normalise the expected hash; ``None`` means "compute and print it"."""
    if sha256 is None or sha256 == "print":
        return None
    if not isinstance(sha256, str):
        raise ValueError(f"sha256 must be a 64-digit hex string, None or 'print', got {sha256!r}")
    value = sha256.strip().lower()
    if value.startswith("sha256:"):
        value = value[len("sha256:") :]
    if not _HEX64.match(value):
        raise ValueError(f"sha256 must be a 64-digit hex string, None or 'print', got {sha256!r}")
    return value


def _filename_from_url(url):
    name = Path(unquote(urlparse(url).path)).name
    if not name:
        raise ValueError(f"cannot take a file name from url {url!r}: pass filename=")
    return name


def _report_unverified(path, source):
    digest = file_sha256(path)
    msg = f"sha256 of {source}: {digest} (unverified: put it in the config)"
    logger.warning(msg)
    return digest


def _from_mirror(mirror_file, target, sha256, stale=False):
    """Verify ``mirror_file`` and copy it atomically to ``target`` (``stale``: a mismatching
    cached copy there was deleted, which the error names)."""
    if sha256 is not None:
        actual = file_sha256(mirror_file)
        if actual != sha256:
            note = f"the mirror's file is kept, not copied; {_cache_note(target, stale)}"
            raise ChecksumError(f"mirror file {mirror_file}", sha256, actual, note)
    else:
        _report_unverified(mirror_file, f"mirror file {mirror_file}")
    atomic_write(target, lambda tmp: shutil.copyfile(mirror_file, tmp))
    logger.info("copied %s from mirror %s", target, mirror_file)


class _HashingDownloader:
    """pooch's HTTP downloader that remembers the hash of what it fetched.

    pooch deletes a mismatching download before raising; keeping the digest lets the
    error name the actual hash.
    """

    def __init__(self):
        self._inner = pooch.HTTPDownloader(progressbar=False, timeout=TIMEOUT)
        self.actual = None

    def __call__(self, url, output_file, pooch_obj):
        self._inner(url, output_file, pooch_obj)
        self.actual = file_sha256(output_file)


def _reason(exc):
    """A short one-line reason: the OS error of a refused connection, else the message."""
    text = " ".join(str(exc).split())
    errno = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    if errno:
        return errno.group(1).strip()
    return text or type(exc).__name__


def fetch(
    url,
    sha256,
    *,
    cache_dir,
    mirror=None,
    mirror_relpath=None,
    filename=None,
    processor=None,
):
    """Local path of a verified copy of ``url``: cache, then mirror, then download.

    Parameters
    ----------
    url : str
        Public address of the file (http, https or ftp).
    sha256 : str or None
        Expected SHA-256 (64 hex digits, optionally prefixed ``sha256:``).  ``None`` or
        ``"print"`` skips verification and prints/logs the file's hash instead.
    cache_dir : path-like
        Directory of the cache; the file is stored as ``cache_dir/filename``.
    mirror : path-like or None
        Local mirror directory tried before the URL.  When it does not exist or lacks
        the file, the URL is used (logged); if that fails too, the error names both.
    mirror_relpath : str or None
        Path of the file inside ``mirror`` (default: ``filename``).
    filename : str or None
        Name in the cache (default: the last component of the URL's path); may hold
        sub-directories.
    processor : callable or None
        A pooch processor run on the cached file, e.g. :func:`untar` or :func:`unzip`;
        its return value is returned instead of the path.

    Returns
    -------
    path : pathlib.Path or object
        The cached file, or what ``processor`` returns.

    Raises
    ------
    ChecksumError
        The mirror or downloaded file does not match ``sha256`` (a download is deleted,
        a bad mirror file is not copied).  A cached file that does not match is not an
        error: it is replaced from the mirror or the URL.
    DownloadError
        The file is neither cached nor in the mirror and the server is unreachable or
        answers with an error; the message names the URL and, if one was given, the
        missing mirror directory or file.
    """
    expected = _check_sha256(sha256)
    filename = filename or _filename_from_url(url)
    cache_dir = Path(cache_dir).resolve()
    target = cache_dir / filename

    cached = target.is_file() and (expected is None or file_sha256(target) == expected)
    stale = not cached and target.exists()
    if stale:
        logger.warning("cached %s does not match sha256 %s: fetching it again", target, expected)
        target.unlink()
    fresh = False
    note = ""
    if cached:
        logger.info("cache hit %s", target)
    elif mirror is not None:
        mirror = Path(mirror)
        mirror_file = mirror / (mirror_relpath or filename)
        if not mirror.is_dir():
            note = f" (mirror directory not found: {mirror})"
            logger.warning("mirror directory not found: %s; downloading %s", mirror, url)
        elif mirror_file.is_file():
            _from_mirror(mirror_file, target, expected, stale)
            cached = fresh = True
        else:
            note = f" (not in mirror: {mirror_file})"
            logger.info("%s not in mirror: downloading %s", mirror_file, url)

    if cached:  # already verified: no second hashing of a large file by pooch
        if processor is None:
            return target
        return processor(str(target), "download" if fresh else "fetch", None)
    downloader = _HashingDownloader()
    try:
        path = pooch.retrieve(
            url,
            known_hash=expected,
            fname=filename,
            path=cache_dir,
            downloader=downloader,
            progressbar=False,
        )
    except ValueError as exc:
        if downloader.actual is not None and downloader.actual != expected:
            note = f"the download was deleted; {_cache_note(target, stale)}"
            raise ChecksumError(url, expected, downloader.actual, note) from None
        raise DownloadError(f"cannot download {url}: {_reason(exc)}{note}") from None
    except Exception as exc:  # requests' connection, timeout and HTTP errors
        raise DownloadError(f"cannot download {url}: {_reason(exc)}{note}") from None
    os.chmod(path, default_file_mode())  # pooch's temporary download is 0600
    if expected is None:
        _report_unverified(path, url)
    return Path(path) if processor is None else processor(str(path), "download", None)
