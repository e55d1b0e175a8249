#!/usr/bin/python3
"""Measure libxml2 (lxml.etree.iterparse) on an event_file row stream.

Usage: /usr/bin/python3 bench_lxml.py STREAM_FILE [extract|parse]

The stream has one <event> per line (several root elements), so it is fed to
iterparse inside a synthetic <rows> wrapper. For every event the script does
what the Go decoder does ("extract", the default): read name, package and
timestamp, and each <data>/<action>'s name, <value> text and <text>; then it
frees the element. "parse" only lets libxml2 build each event's tree and reads
the event's attributes: the ceiling of libxml2 itself, without Python work
per field.
Prints "events=N seconds=S cpu_seconds=C MB/s=M cpuMB/s=…" (CPU time
is the process's own, independent of other load on the machine). A measurement tool only (BenchmarkLxmlPeer
runs it); not part of the test suite. Needs Debian's python3-lxml.
"""
import sys
import time

from lxml import etree


class Wrapped:
    """File-like object yielding <rows> + file + </rows>."""

    def __init__(self, f):
        self.parts = [b"<rows>"]
        self.f = f
        self.done = False

    def read(self, n=-1):
        if self.parts:
            return self.parts.pop(0)
        if not self.done:
            chunk = self.f.read(1 << 20)
            if chunk:
                return chunk
            self.done = True
            return b"</rows>"
        return b""


def main(path, mode):
    extract = mode == "extract"
    size = 0
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(0)
        start = time.perf_counter()
        cpu_start = time.process_time()
        events = 0
        fields = 0
        for _, ev in etree.iterparse(Wrapped(f), events=("end",), tag="event"):
            ev.get("name")
            ev.get("package")
            ev.get("timestamp")
            for child in (ev if extract else ()):
                child.get("name")
                value = child.find("value")
                if value is not None:
                    value.text
                text = child.find("text")
                if text is not None:
                    text.text
                fields += 1
            events += 1
            ev.clear()
            parent = ev.getparent()
            while ev.getprevious() is not None:
                del parent[0]
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    print("mode=%s events=%d seconds=%.3f cpu_seconds=%.3f MB/s=%.1f cpuMB/s=%.1f fields=%d"
          % (mode, events, seconds, cpu_seconds, size / seconds / 1e6, size / cpu_seconds / 1e6, fields))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "extract")
