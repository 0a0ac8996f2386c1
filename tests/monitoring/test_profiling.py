# SPDX-License-Identifier: Apache-2.0
"""OSProfiler (server/profiling.py) in a real server process: a request
signed with the HMAC key is traced into Redis, read back through
osprofiler's own driver; a server without osprofiler says so at start and
serves.

The spans go to the Redis the test machines run (127.0.0.1:6379):
osprofiler's SQLAlchemy driver cannot serve here, as with SQLAlchemy 2
it commits no span and cannot read them back (``select([table])``), and
it takes no ``sqlite://`` URL. In the monitoring suite, run once: the
profiler does not depend on the database, and the server here runs on a
SQLite file."""

import os
import socket
import subprocess
import sys
import urllib.request

import fixtures
import testtools

from benchmarks import local_server

REDIS = ('127.0.0.1', 6379)
REDIS_URL = 'redis://%s:%d' % REDIS
HMAC_KEY = 'a-key-for-tests'
READY_TIMEOUT = 60


def _redis_answers():
    try:
        socket.create_connection(REDIS, 2).close()
    except OSError:
        return False
    return True


def _profiler_conf():
    """A configuration with osprofiler's options at their defaults, for
    its driver (which reads them from the global one otherwise)."""
    from oslo_config import cfg
    from osprofiler import opts
    conf = cfg.ConfigOpts()
    opts.set_defaults(conf)
    conf([], default_config_files=[])
    return conf


class _ServerTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def start(self, conf_text, env=None):
        """A server on a fresh SQLite file; its base URL."""
        port = local_server.free_port()
        conf = os.path.join(self.tmp, 'placement.conf')
        with open(conf, 'w') as f:
            f.write('[api]\nauth_strategy = noauth2\n'
                    '[placement_database]\nconnection = sqlite:///%s\n'
                    'sync_on_startup = true\n%s'
                    % (os.path.join(self.tmp, 'p.sqlite'), conf_text))
        self.output = os.path.join(self.tmp, 'output')
        proc = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server', '--config-file',
             conf, '--host', '127.0.0.1', '--port', str(port)],
            env=dict(os.environ, HOME=self.tmp, **(env or {})),
            cwd=self.tmp, stdout=open(self.output, 'w'),
            stderr=subprocess.STDOUT)
        self.addCleanup(_stop, proc)
        base = 'http://127.0.0.1:%d' % port
        local_server.wait_until_ready(proc, base, '/', READY_TIMEOUT)
        return base

    def read_output(self):
        with open(self.output) as f:
            return f.read()


class TestTraced(_ServerTestCase):

    def setUp(self):
        super().setUp()
        # A missing peer fails the test: it must never pass as a skip.
        if not _redis_answers():
            self.fail('no Redis at %s:%d' % REDIS)

    def test_signed_request_is_traced_with_its_statements(self):
        from osprofiler.drivers import base as drivers
        from osprofiler import profiler
        from osprofiler import web

        server = self.start(
            '[profiler]\nenabled = true\nhmac_keys = %s\n'
            'connection_string = %s\ntrace_sqlalchemy = true\n'
            % (HMAC_KEY, REDIS_URL))
        # The client's side, as osprofiler's own CLI does it.
        profiler.init(HMAC_KEY)
        try:
            trace_headers = web.get_trace_id_headers()
            base_id = profiler.get().get_base_id()
        finally:
            profiler.clean()
        store = drivers.get_driver(REDIS_URL, conf=_profiler_conf())
        self.addCleanup(store.db.delete, 'osprofiler_opt:' + base_id)

        req = urllib.request.Request(
            server + '/resource_providers?name=traced',
            headers=dict(trace_headers, **{'x-auth-token': 'admin'}))
        with urllib.request.urlopen(req, timeout=10) as resp:
            self.assertEqual(200, resp.status)

        report = store.get_report(base_id)
        [wsgi] = report['children']
        info = wsgi['info']
        self.assertEqual(('wsgi', 'placement', 'placement',
                          socket.gethostname()),
                         (info['name'], info['project'], info['service'],
                          info['host']))
        request = info['meta.raw_payload.wsgi-start']['info']['request']
        self.assertEqual(('/resource_providers', 'name=traced', 'GET'),
                         (request['path'], request['query'],
                          request['method']))
        statements = [
            child['info']['meta.raw_payload.db-start']['info']['db'][
                'statement'] for child in wsgi['children']]
        self.assertTrue(statements)
        self.assertTrue(any('resource_providers' in s for s in statements),
                        statements)
        self.assertEqual({'wsgi', 'db'}, set(report['stats']))


class TestWithoutOsprofiler(_ServerTestCase):
    """osprofiler shadowed by a package that fails to import, as a
    missing one does, in the server and its workers."""

    def start_without_osprofiler(self, conf_text):
        shadow = os.path.join(self.tmp, 'shadow', 'osprofiler')
        os.makedirs(shadow)
        with open(os.path.join(shadow, '__init__.py'), 'w') as f:
            f.write('raise ImportError("No module named \'osprofiler\'")\n')
        path = os.pathsep.join(
            [os.path.dirname(shadow)]
            + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
               if p])
        server = self.start(conf_text, env={'PYTHONPATH': path})
        with urllib.request.urlopen(server + '/', timeout=10) as resp:
            self.assertEqual(200, resp.status)
        return self.read_output()

    def test_enabled_says_so_at_start_and_serves(self):
        output = self.start_without_osprofiler('[profiler]\nenabled = true\n')
        self.assertIn('[profiler] enabled is true but osprofiler cannot be '
                      'imported (No module named \'osprofiler\'): requests '
                      'are not traced.', output)
        self.assertNotIn('Traceback', output)

    def test_disabled_says_nothing(self):
        output = self.start_without_osprofiler(
            '[profiler]\nenabled = false\n')
        self.assertNotIn('osprofiler', output)


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
