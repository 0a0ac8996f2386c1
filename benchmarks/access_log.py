# SPDX-License-Identifier: Apache-2.0
"""What the INFO access line costs a request: ``GET /`` through the whole
application in process, with oslo.log writing the line to a file, with
the line silenced through ``default_log_levels``, and without logging set
up at all. Prints the median microseconds per request of 7 runs of 2,000.

    .venv/bin/python -m benchmarks.access_log
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ('unconfigured', 'logged', 'silenced')
RUNS, REQUESTS, WARM_UP = 7, 2000, 500


def measure(mode):
    import webob

    from osc_placement.server import app as app_mod
    from osc_placement.server import conf as conf_mod
    tmp = tempfile.mkdtemp()
    conf = conf_mod.make_conf('sqlite:///%s/b.db' % tmp)
    if mode != 'unconfigured':
        conf.set_override('log_file', os.path.join(tmp, 'placement.log'))
        if mode == 'silenced':
            conf.set_override('default_log_levels',
                              ['osc_placement.server.app=WARN'])
        conf_mod.setup_logging(conf)
    app = app_mod.make_app(conf)

    environ = webob.Request.blank('/', headers={'X-Auth-Token': 'admin'}
                                  ).environ

    def one():
        # As a WSGI server serves it: the body sent, then closed (the
        # access line is written at close).
        body = app(dict(environ), lambda status, headers, exc_info=None:
                   None)
        for _ in body:
            pass
        if hasattr(body, 'close'):
            body.close()
    for _ in range(WARM_UP):
        one()
    runs = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for _ in range(REQUESTS):
            one()
        runs.append((time.perf_counter() - started) / REQUESTS * 1e6)
    return statistics.median(runs)


def main():
    if len(sys.argv) > 1:
        print('%.1f' % measure(sys.argv[1]))
        return
    # One process per mode: oslo.log's set-up is process-wide.
    for mode in MODES:
        out = subprocess.run([sys.executable, '-m', 'benchmarks.access_log',
                              mode], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
        print('%-12s %s us/request' % (mode, out))


if __name__ == '__main__':
    main()
