# SPDX-License-Identifier: Apache-2.0
"""The embedded server as a process on a free loopback port, for the
benchmarks that time client commands against it."""

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from benchmarks import client as http_client


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start(connection, workers=1, seconds=60, threads=None, ready_path='/',
          source_tree=None):
    """``(process, url)`` of a server on ``connection``, once
    ``ready_path`` answers 200 (with the token noauth2 takes).

    ``source_tree``: run the server of that checkout rather than the one
    this Python imports. Its PYTHONPATH is that tree alone, and it runs
    in an empty directory: ``python -m`` puts the working directory
    first on the path, before PYTHONPATH."""
    port = free_port()
    command = [sys.executable, '-m', 'osc_placement.server', '--host',
               '127.0.0.1', '--port', str(port), '--database-connection',
               connection, '--workers', str(workers)]
    if threads:
        command += ['--threads', str(threads)]
    with contextlib.ExitStack() as stack:
        cwd = env = None
        if source_tree is not None:
            cwd = stack.enter_context(
                tempfile.TemporaryDirectory(prefix='ocp-tree-'))
            env = dict(os.environ, PYTHONPATH=os.path.abspath(source_tree))
        popen = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, cwd=cwd, env=env)
        url = 'http://127.0.0.1:%d' % port
        # The empty directory goes once the server has read its path.
        wait_until_ready(popen, url, ready_path, seconds)
    return popen, url


def stop(process, seconds=60):
    """SIGTERM to a server's master (it stops its workers), SIGKILL if it
    is still there after ``seconds``; nothing if None."""
    if process is None:
        return
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_ready(popen, url, ready_path, seconds):
    """Return once ``url + ready_path`` answers 200; kill ``popen`` and
    raise RuntimeError if it exits, refuses the request or does not
    answer within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError('server exited with %s' % popen.returncode)
        try:
            urllib.request.urlopen(urllib.request.Request(
                url + ready_path, headers={
                    'X-Auth-Token': 'admin', 'OpenStack-API-Version':
                    'placement ' + http_client.MICROVERSION}),
                timeout=max(1.0, deadline - time.monotonic())).read()
            return
        except urllib.error.HTTPError as error:
            # A refused request will not be accepted on a later try.
            if error.code < 500:
                popen.kill()
                raise RuntimeError('%s answered %s' % (ready_path,
                                                       error.code))
            time.sleep(0.1)
        except OSError:
            time.sleep(0.1)
    popen.kill()
    raise RuntimeError('server at %s did not answer' % url)
