# SPDX-License-Identifier: Apache-2.0
"""The Prometheus test helper against real Prometheus: it scrapes its
own /metrics and a target of ours, answers PromQL, and loads the shipped
rules."""

import http.server
import threading

import testtools

from tests.monitoring import prometheus_run
from tests.monitoring import shipped

EXPOSITION = (b'# TYPE osc_placement_test_answers_total counter\n'
              b'osc_placement_test_answers_total{route="/"} 42\n')


class _Exposition(http.server.BaseHTTPRequestHandler):

    def do_GET(self):
        if self.path != '/metrics':
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain; version=0.0.4')
        self.send_header('Content-Length', str(len(EXPOSITION)))
        self.end_headers()
        self.wfile.write(EXPOSITION)

    def log_message(self, *args):
        pass


def serve_metrics():
    """(HTTP server answering /metrics on a free port, its thread)."""
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Exposition)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


class TestPrometheusRun(testtools.TestCase):
    """One Prometheus for the class: it scrapes nothing for its first
    seconds (its target discovery sends updates every five), which every
    test would pay again."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server, cls.thread = serve_metrics()
        cls.target = '127.0.0.1:%d' % cls.server.server_address[1]
        cls.prometheus = prometheus_run.PrometheusRun(
            [cls.target], job='placement', scrape_self=True,
            rule_files=[shipped.RULES])
        try:
            cls.prometheus.setUp()
            cls.up = cls.prometheus.wait_for_targets()
        except BaseException:
            cls.prometheus.cleanUp()
            cls._stop_server()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.cleanUp()
        cls._stop_server()
        super().tearDownClass()

    @classmethod
    def _stop_server(cls):
        cls.server.shutdown()
        cls.server.server_close()
        cls.thread.join()

    def test_waits_for_every_target(self):
        self.assertEqual({('placement', self.target): 1,
                          ('prometheus', self.prometheus.url[7:]): 1},
                         self.up)

    def test_scrapes_a_target(self):
        prometheus = self.prometheus
        self.assertEqual(42, prometheus.value(
            'osc_placement_test_answers_total{job="placement"}'))
        sample, = prometheus.query('osc_placement_test_answers_total')
        self.assertEqual({'__name__': 'osc_placement_test_answers_total',
                          'job': 'placement', 'instance': self.target,
                          'route': '/'}, sample.labels)

    def test_scrapes_itself(self):
        prometheus = self.prometheus
        build, = prometheus.wait_for('prometheus_build_info')
        self.assertTrue(build.labels['version'])
        self.assertGreater(prometheus.value(
            'sum(prometheus_http_requests_total)'), 0)

    def test_loads_shipped_rules(self):
        rules = self.prometheus.rules()
        expected = {rule['alert'] for rule in shipped.alerts(
            shipped.load_yaml(shipped.RULES))}
        self.assertEqual(expected, set(rules))
        for name, rule in rules.items():
            self.assertNotEqual('err', rule.get('health'), name)

    def test_wait_for_says_what_the_targets_did(self):
        error = self.assertRaises(
            AssertionError, self.prometheus.wait_for, 'up == 2',
            timeout=0.5)
        self.assertIn('up == 2 still empty', str(error))
        self.assertIn('http://%s/metrics' % self.target, str(error))

    def test_query_of_a_range_is_refused(self):
        error = self.assertRaises(AssertionError, self.prometheus.query,
                                  'up[1m]')
        self.assertIn('not an instant vector', str(error))

    def test_stops_at_cleanup(self):
        run = prometheus_run.PrometheusRun()
        with run:
            process = run.process
            self.assertIsNone(process.poll())
        self.assertIsNotNone(process.poll())
