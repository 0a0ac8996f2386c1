# SPDX-License-Identifier: Apache-2.0
"""benchmarks/scale.py: its table's targets, its reading of /proc, and
(on PostgreSQL) one whole run of the command on two small clouds."""

import io
import os
import subprocess
import sys
import unittest

import fixtures
import sqlalchemy as sa
import testtools

from benchmarks import databases
from benchmarks import scale
from tests.server import fixtures as server_fixtures

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def rows(limit10=(5.0, 5.0), limit1000=(8.0, 60.0), no_limit=(15.0, 90.0)):
    return {'plain limit=10 ms': limit10, 'plain limit=1000 ms': limit1000,
            'plain, no limit ms': no_limit}


def marks(table_rows, size):
    lines, passed = scale.render(table_rows, scale.TARGETS[size], size,
                                 1000)
    return {line.split('|')[1].strip(): line.split('|')[-2].strip()
            for line in lines[2:]}, passed


class TestTargets(testtools.TestCase):

    def test_limit10_within_three_times_at_10k(self):
        found, passed = marks(rows(limit10=(5.0, 14.9)), 10000)
        self.assertEqual('pass', found['plain limit=10 ms'])
        self.assertTrue(passed)

    def test_limit10_beyond_three_times_fails_at_10k(self):
        found, passed = marks(rows(limit10=(5.0, 15.1)), 10000)
        self.assertEqual('FAIL', found['plain limit=10 ms'])
        self.assertFalse(passed)

    def test_limit10_may_be_five_times_at_100k(self):
        found, _ = marks(rows(limit10=(5.0, 25.0)), 100000)
        self.assertEqual('pass', found['plain limit=10 ms'])

    def test_limited_request_slower_than_unlimited_fails(self):
        found, _ = marks(rows(limit1000=(8.0, 95.0)), 10000)
        self.assertEqual('FAIL', found['plain limit=1000 ms'])

    def test_target_size(self):
        self.assertEqual(1000, scale.target_size(1000, 1000))
        self.assertEqual(10000, scale.target_size(10000, 1000))
        self.assertEqual(10000, scale.target_size(5000, 1000))
        self.assertEqual(100000, scale.target_size(100000, 1000))


def baseline_marks(table_rows):
    lines, passed = scale.render(table_rows, scale.BASELINE_TARGETS, 1000,
                                 1000, headings=('baseline', 'this tree'))
    return {line.split('|')[1].strip(): line.split('|')[-2].strip()
            for line in lines[2:]}, passed


class TestBaselineTargets(testtools.TestCase):
    """--baseline: no figure worse than the other tree's, in either
    direction, and the same number of candidates per shape."""

    def test_equal_figures_pass(self):
        found, passed = baseline_marks(dict(
            rows(limit10=(5.0, 5.0), limit1000=(8.0, 8.0),
                 no_limit=(15.0, 15.0)),
            **{'scheduler loop, claims/s': (150.0, 150.0),
               'candidates found per shape': ([10, 52], [10, 52])}))
        self.assertTrue(passed)
        self.assertEqual('pass', found['scheduler loop, claims/s'])

    def test_slower_request_fails(self):
        found, passed = baseline_marks(rows(limit10=(5.0, 5.1)))
        self.assertEqual('FAIL', found['plain limit=10 ms'])
        self.assertFalse(passed)

    def test_fewer_claims_fail(self):
        found, passed = baseline_marks(
            {'scheduler loop, claims/s': (150.0, 149.0)})
        self.assertEqual('FAIL', found['scheduler loop, claims/s'])
        self.assertFalse(passed)

    def test_other_answers_fail(self):
        found, passed = baseline_marks(
            {'candidates found per shape': ([10, 52], [10, 51])})
        self.assertEqual('FAIL', found['candidates found per shape'])
        self.assertFalse(passed)

    def test_columns_are_named_by_tree(self):
        lines, _ = scale.render(rows(), scale.BASELINE_TARGETS, 1000, 1000,
                                headings=('baseline', 'this tree'))
        self.assertEqual(['figure', 'baseline', 'this tree', 'ratio',
                          'target', ''],
                         [cell.strip() for cell in lines[0].split('|')[1:-1]])

    def test_counts_are_at_least_one(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', io.StringIO()))
        self.assertEqual(5, scale.parse_args(['--nodes', '1000'])
                         .upstream_turn)
        for option in ('--upstream-turn', '--samples', '--read-samples',
                       '--upstream-samples'):
            self.assertRaises(SystemExit, scale.parse_args,
                              ['--nodes', '1000', option, '0'])

    def test_baseline_with_upstream_refused(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', io.StringIO()))
        self.assertRaises(SystemExit, scale.parse_args, [
            '--nodes', '1000', '--baseline', '/tmp/x',
            '--upstream-venv', '/tmp/v'])


def upstream_figures(nodes, ours_ms, theirs_ms, loop=False):
    """One size of measure_upstream's figures: every shape at ``ours_ms``
    and ``theirs_ms``."""
    figures = {'nodes': nodes, 'queries': {
        name: [ours_ms, theirs_ms] for name in scale.SHAPE_ROWS}}
    if loop:
        figures['loop'] = [
            {'claims_per_second': 100.0, 'limit10_median_ms': 4.0},
            {'claims_per_second': 5.0, 'limit10_median_ms': 400.0}]
    return figures


def upstream_marks(measured):
    lines, passed = scale.render_upstream(measured)
    return {line.split('|')[1].strip(): line.split('|')[-2].strip()
            for line in lines[2:]}, passed


class TestUpstreamTargets(testtools.TestCase):
    """Issue 18's 30 times upstream applies to the candidate shapes at
    the reference's size (the first measured), not to GET
    /resource_providers, the loop or the larger cloud."""

    def test_thirty_times_at_the_reference_size_passes(self):
        found, passed = upstream_marks([
            upstream_figures(1000, 10.0, 300.0, loop=True),
            upstream_figures(10000, 100.0, 200.0)])
        self.assertTrue(passed)
        self.assertEqual('pass', found['member_of ms'])
        self.assertEqual('', found['GET /resource_providers ms'])
        self.assertEqual('', found['scheduler loop, claims/s'])

    def test_less_at_the_reference_size_fails(self):
        found, passed = upstream_marks([
            upstream_figures(1000, 10.0, 290.0, loop=True)])
        self.assertFalse(passed)
        self.assertEqual('FAIL', found['traits ms'])

    def test_checked_on_the_turns_where_measured(self):
        figures = upstream_figures(1000, 10.0, 200.0, loop=True)
        figures.update(turn=5, queries_in_turns={
            name: [5.0, 200.0] for name in scale.SHAPE_ROWS})
        found, passed = upstream_marks([figures])
        self.assertTrue(passed)
        self.assertEqual('pass', found['member_of ms'])
        figures['queries_in_turns']['member_of'] = [8.0, 200.0]
        found, passed = upstream_marks([figures])
        self.assertFalse(passed)
        self.assertEqual('FAIL', found['member_of ms'])
        self.assertEqual('pass', found['traits ms'])

    def test_turns_have_columns_of_their_own(self):
        figures = upstream_figures(1000, 10.0, 200.0, loop=True)
        figures.update(turn=5, queries_in_turns={
            name: [5.0, 200.0] for name in scale.SHAPE_ROWS})
        lines, _ = scale.render_upstream([
            figures, upstream_figures(10000, 100.0, 200.0)])
        header = [cell.strip() for cell in lines[0].split('|')[1:-1]]
        self.assertEqual(
            ['figure', 'ours, 1,000, one by one',
             'upstream, 1,000, one by one', 'faster',
             'ours, 1,000, turns of 5', 'upstream, 1,000, turns of 5',
             'faster', 'ours, 10,000, one by one',
             'upstream, 10,000, one by one', 'faster',
             'target (1,000, turns of 5)', ''], header)
        member_of = [cell.strip() for cell in lines[2 + list(
            scale.SHAPE_ROWS).index('member_of')].split('|')[1:-1]]
        self.assertEqual(['10.0', '200.0', '20.0x', '5.00', '200.0',
                          '40.0x', '100.0', '200.0', '2.0x'],
                         member_of[1:10])


class TestProc(testtools.TestCase):

    def test_a_busy_child_is_found_with_its_cpu_and_memory(self):
        child = subprocess.Popen([sys.executable, '-c', (
            'import sys, time\n'
            'end = time.process_time() + 0.3\n'
            'while time.process_time() < end: pass\n'
            'print("busy", flush=True)\n'
            'sys.stdin.read()')],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(child.wait)
        self.addCleanup(child.stdin.close)
        self.assertEqual('busy\n', child.stdout.readline())
        self.assertIn(child.pid, scale.children(os.getpid()))
        self.assertGreaterEqual(scale.cpu_seconds(child.pid), 0.25)
        self.assertGreater(scale.memory_bytes(child.pid, 'VmRSS'), 1 << 20)

    def test_a_process_gone_has_spent_nothing(self):
        child = subprocess.Popen([sys.executable, '-c', 'pass'])
        child.wait()
        self.assertEqual(0.0, scale.cpu_seconds(child.pid))


class TestWholeRun(testtools.TestCase):
    """The command itself, on clouds of 40 and 20 nodes: needs a
    PostgreSQL server (OSC_PLACEMENT_TEST_DB_URL)."""

    def setUp(self):
        super().setUp()
        self.server = os.environ.get('OSC_PLACEMENT_TEST_DB_URL', '')

    def test_prints_the_table_and_drops_its_databases(self):
        output = io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', output):
            self.assertEqual(0, scale.main([
                '--nodes', '40', '--reference-nodes', '20',
                '--database-url', self.server, '--samples', '1',
                '--read-samples', '1', '--loop-seconds', '0.5',
                '--loop-rounds', '1', '--write-seconds', '0.5']))
        text = output.getvalue()
        self.assertIn('bulk SQL loader', text)
        self.assertIn('| figure', text)
        self.assertIn('| scheduler loop, claims/s', text)
        admin = databases.admin_engine(self.server)
        self.addCleanup(admin.dispose)
        with admin.connect() as conn:
            left = conn.execute(sa.text(
                "SELECT datname FROM pg_database WHERE datname LIKE :name"),
                {'name': 'scale_%%_%d' % os.getpid()}).all()
        self.assertEqual([], left)

    def test_against_a_baseline_tree(self):
        """This very checkout as the baseline: its loader runs as a
        command and its server from the tree, and both answer alike."""
        output = io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', output):
            self.assertEqual(0, scale.main([
                '--nodes', '20', '--baseline', TOP,
                '--database-url', self.server, '--samples', '1',
                '--read-samples', '1', '--loop-seconds', '0.5',
                '--loop-rounds', '1', '--write-seconds', '0.5']))
        text = output.getvalue()
        self.assertIn('[base] bulk SQL loader', text)
        answers = [line for line in text.splitlines()
                   if line.startswith('| candidates found per shape')]
        self.assertEqual(1, len(answers))
        self.assertEqual('pass', answers[0].split('|')[-2].strip())


def load_tests(loader, standard_tests, pattern):
    """The whole run in the PostgreSQL pass only: benchmarks.scale runs
    on PostgreSQL alone."""
    if server_fixtures.backend_name() == 'postgresql':
        return standard_tests
    suite = unittest.TestSuite()
    for test in testtools.iterate_tests(standard_tests):
        if not isinstance(test, TestWholeRun):
            suite.addTest(test)
    return suite
