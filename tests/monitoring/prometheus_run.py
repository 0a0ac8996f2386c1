# SPDX-License-Identifier: Apache-2.0
"""A real Prometheus for tests: started on a free port of 127.0.0.1,
with a data directory of its own, scraping the given targets every
second; stopped and removed at cleanup.

    prometheus = self.useFixture(PrometheusRun(['127.0.0.1:8778']))
    prometheus.wait_for_targets()
    samples = prometheus.query('placement_resource_providers')

Needs Debian's prometheus package (tools/prometheus.sh installs it).
"""

import collections
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import fixtures

INSTALL_HINT = ("run tools/prometheus.sh (it installs Debian's prometheus "
                "package, which brings prometheus and promtool)")
START_TIMEOUT = 30
STOP_TIMEOUT = 10
# A port taken between our probe and Prometheus' bind: try another.
START_ATTEMPTS = 3

Sample = collections.namedtuple('Sample', 'labels value')


def executable(name):
    """The path of prometheus or promtool; fails, saying how to install
    them, when missing (a missing tool must not pass as a skipped
    test)."""
    path = shutil.which(name)
    if path is None:
        raise AssertionError('%s is not installed: %s' % (name,
                                                          INSTALL_HINT))
    return path


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class PrometheusRun(fixtures.Fixture):
    """Prometheus scraping ``targets`` ("host:port" strings) as job
    ``job`` at ``metrics_path``; with ``scrape_self`` also its own
    /metrics as job "prometheus". ``rule_files`` are loaded and evaluated
    at the scrape interval."""

    def __init__(self, targets=(), job='placement', metrics_path='/metrics',
                 scrape_self=False, scrape_interval='1s', rule_files=()):
        super().__init__()
        self.targets = list(targets)
        self.job = job
        self.metrics_path = metrics_path
        self.scrape_self = scrape_self
        self.scrape_interval = scrape_interval
        self.rule_files = [os.path.abspath(f) for f in rule_files]
        self.process = None
        self.url = None

    def _setUp(self):
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.addCleanup(self._stop)
        for attempt in range(START_ATTEMPTS):
            port = free_port()
            self.url = 'http://127.0.0.1:%d' % port
            self._start(port)
            if self._wait_ready():
                return
            self._stop()
        raise AssertionError('Prometheus did not start:\n%s' % self.log())

    def _config(self, port):
        jobs = []
        if self.targets:
            jobs.append({'job_name': self.job,
                         'metrics_path': self.metrics_path,
                         'static_configs': [{'targets': self.targets}]})
        if self.scrape_self:
            jobs.append({'job_name': 'prometheus',
                         'static_configs': [
                             {'targets': ['127.0.0.1:%d' % port]}]})
        return {'global': {'scrape_interval': self.scrape_interval,
                           'scrape_timeout': self.scrape_interval,
                           'evaluation_interval': self.scrape_interval},
                'rule_files': self.rule_files,
                'scrape_configs': jobs}

    def _start(self, port):
        config = os.path.join(self.directory, 'prometheus.yml')
        # JSON is YAML: no YAML writer needed.
        with open(config, 'w') as f:
            json.dump(self._config(port), f, indent=2)
        data = os.path.join(self.directory, 'data')
        os.makedirs(data, exist_ok=True)
        self.log_path = os.path.join(self.directory, 'prometheus.log')
        with open(self.log_path, 'ab') as log:
            self.process = subprocess.Popen(
                [executable('prometheus'),
                 '--config.file=%s' % config,
                 '--storage.tsdb.path=%s' % data,
                 '--web.listen-address=127.0.0.1:%d' % port,
                 '--log.level=warn'],
                stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)

    def _wait_ready(self):
        """True once /-/ready answers 200; False if the process ended."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + '/-/ready',
                                            timeout=2) as response:
                    if response.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        return False

    def _stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def log(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()[-4000:]

    def api(self, path, **params):
        """The "data" of an HTTP API answer (/api/v1/<path>)."""
        url = '%s/api/v1/%s' % (self.url, path)
        if params:
            url += '?' + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = json.load(response)
        except urllib.error.HTTPError as error:
            body = json.load(error)
        if body.get('status') != 'success':
            raise AssertionError('%s: %s' % (url, body))
        return body['data']

    def query(self, expr):
        """An instant query's vector, as [Sample(labels, value)]; a
        scalar answer is one Sample with no labels."""
        data = self.api('query', query=expr)
        if data['resultType'] == 'vector':
            return [Sample(item['metric'], float(item['value'][1]))
                    for item in data['result']]
        if data['resultType'] == 'scalar':
            return [Sample({}, float(data['result'][1]))]
        raise AssertionError('%s answered a %s, not an instant vector'
                             % (expr, data['resultType']))

    def value(self, expr):
        """The value of a query that answers exactly one sample."""
        samples = self.query(expr)
        if len(samples) != 1:
            raise AssertionError('%s answered %d samples, not one: %s'
                                 % (expr, len(samples), samples))
        return samples[0].value

    def wait_for(self, expr, timeout=30):
        """The samples of the first non-empty answer to ``expr`` (a
        filter such as 'up == 1' makes it a condition); fails after
        ``timeout`` seconds with the targets' scrape errors."""
        deadline = time.monotonic() + timeout
        while True:
            samples = self.query(expr)
            if samples:
                return samples
            if time.monotonic() > deadline:
                raise AssertionError(
                    '%s still empty after %ss; targets: %s' % (
                        expr, timeout, self.target_health()))
            time.sleep(0.2)

    def wait_for_targets(self, timeout=30):
        """Wait until every target has been scraped once, up or down
        (Prometheus passes its targets to the scrapers about five seconds
        after it starts); {(job, instance): up} of them."""
        expected = len(self.targets) + (1 if self.scrape_self else 0)
        self.wait_for('count(up) == %d' % expected, timeout)
        return {(sample.labels['job'], sample.labels['instance']):
                sample.value for sample in self.query('up')}

    def target_health(self):
        """[(scrape URL, health, last error)] of the active targets."""
        return [(target['scrapeUrl'], target['health'],
                 target['lastError'])
                for target in self.api('targets')['activeTargets']]

    def rules(self):
        """{rule name: rule} of every loaded rule group."""
        return {rule['name']: rule
                for group in self.api('rules')['groups']
                for rule in group['rules']}
