"""The embedded server as a process on a free loopback port, for the
benchmarks that time client commands against it."""

import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start(connection, workers=1, seconds=60):
    """``(process, url)`` of a server on ``connection``, once it answers."""
    port = free_port()
    popen = subprocess.Popen(
        [sys.executable, '-m', 'osc_placement.server', '--host', '127.0.0.1',
         '--port', str(port), '--database-connection', connection,
         '--workers', str(workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError('server exited with %s' % popen.returncode)
        try:
            urllib.request.urlopen(url + '/', timeout=1).read()
            return popen, url
        except OSError:
            time.sleep(0.1)
    popen.kill()
    raise RuntimeError('server at %s did not answer' % url)
