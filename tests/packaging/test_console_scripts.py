# SPDX-License-Identifier: Apache-2.0
"""Our console scripts beside upstream Placement 16.0.0, in a virtualenv of
their own.

A fresh virtualenv in a temporary directory gets openstack-placement
16.0.0 (pinned by tests/compat/upstream-constraints.txt), then a
client-only install of osc-placement built from this tree, then, as a
deployer would on purpose, packaging/osc-placement-server. What each
stage leaves is recorded once (the class fixture) and checked by the tests:
the client alone leaves upstream's ``placement-manage``,
``placement-status`` and oslo namespaces as they were, and every console
script of ours answers ``--help``; the server distribution gives upstream's
command names to our server.

Needs the package index (pip's cache makes a second run cheaper).
Run once per CI run, not once per database (tools/run-tests.sh packaging).
"""

import glob
import importlib.metadata
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import testtools

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CONSTRAINTS = os.path.join(TOP, 'tests', 'compat',
                           'upstream-constraints.txt')
SERVER_DISTRIBUTION = os.path.join('packaging', 'osc-placement-server')
# What a wheel of ours is built from.
SOURCES = ('osc_placement', 'packaging', 'etc', 'setup.cfg', 'setup.py',
           'pyproject.toml', 'README.rst', 'requirements.txt')
UPSTREAM_COMMANDS = ('placement-manage', 'placement-status')
# Upstream's oslo plugin namespaces, as their generators print them.
GENERATORS = (
    ('oslo-config-generator', '--namespace', 'placement.conf'),
    ('oslopolicy-policy-generator', '--namespace', 'placement'),
)
INSTALL_EXTRA = "pip install 'osc-placement[server]'"
# setup.cfg's data_files: the alert rules and the dashboard, under the
# installation's prefix (doc/source/server/monitoring.rst says where).
MONITORING_FILES = (
    'share/osc-placement/prometheus/placement-rules.yaml',
    'share/osc-placement/prometheus/placement-rules.test.yaml',
    'share/osc-placement/grafana/placement-dashboard.json',
)
COMMAND_TIMEOUT = 120
INSTALL_TIMEOUT = 600


def _copy_sources(destination):
    ignore = shutil.ignore_patterns('__pycache__', '*.egg-info', 'build')
    for name in SOURCES:
        source = os.path.join(TOP, name)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(destination, name),
                            ignore=ignore)
        else:
            shutil.copy(source, destination)


def _read(path):
    """A file's text, or None when there is no such file."""
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _pip(*argv, env=None):
    """The pip running these tests; its output only when it fails."""
    result = subprocess.run(
        [sys.executable, '-m', 'pip', '--disable-pip-version-check']
        + list(argv), capture_output=True, text=True, env=env,
        timeout=INSTALL_TIMEOUT)
    if result.returncode:
        raise AssertionError('pip %s exited %d:\n%s%s' % (
            ' '.join(argv), result.returncode, result.stdout,
            result.stderr[-4000:]))


class Venv:
    """A virtualenv without pip of its own, installed into by the pip
    running these tests (``pip --python``)."""

    def __init__(self, path):
        self.path = path
        subprocess.run([sys.executable, '-m', 'venv', '--without-pip',
                        path], check=True)
        self.home = os.path.join(path, 'home')
        os.mkdir(self.home)

    def bin(self, name):
        return os.path.join(self.path, 'bin', name)

    def pip_install(self, *requirements):
        # No byte-compiling: most of an install's time, for modules a
        # --help never imports.
        _pip('--python', self.bin('python'), 'install', '--no-compile',
             '-c', CONSTRAINTS, *requirements)

    def run(self, command, *argv):
        """(exit status, stdout, stderr) of one of this venv's commands,
        with a home of its own (oslo.config and the server's data
        directory look there)."""
        result = subprocess.run(
            [self.bin(command)] + list(argv), capture_output=True,
            text=True, cwd=self.home, timeout=COMMAND_TIMEOUT,
            env=dict(os.environ, HOME=self.home,
                     PATH=os.path.dirname(self.bin('python')) + os.pathsep
                     + os.environ.get('PATH', '')))
        return result.returncode, result.stdout, result.stderr

    def read_script(self, command):
        with open(self.bin(command)) as f:
            return f.read()

    def console_scripts(self, distribution):
        """The console script names a distribution installed here."""
        result = subprocess.run(
            [self.bin('python'), '-c',
             'import importlib.metadata as m, sys\n'
             'for ep in m.distribution(sys.argv[1]).entry_points:\n'
             '    if ep.group == "console_scripts": print(ep.name)\n',
             distribution], capture_output=True, text=True, check=True)
        return sorted(result.stdout.split())


def _build_wheels(tmp):
    """Wheels of osc-placement and osc-placement-server from this tree."""
    sources = os.path.join(tmp, 'src')
    wheels = os.path.join(tmp, 'wheels')
    os.mkdir(sources)
    _copy_sources(sources)
    # pbr takes its version from git; the copy has none.
    _pip('wheel', '--no-deps', '-w', wheels, sources,
         os.path.join(sources, SERVER_DISTRIBUTION),
         env=dict(os.environ, PBR_VERSION=importlib.metadata.version(
             'osc-placement')))
    return (glob.glob(os.path.join(wheels, 'osc_placement-*.whl'))[0],
            glob.glob(os.path.join(wheels, 'osc_placement_server-*.whl'))[0])


class TestConsoleScriptsBesideUpstream(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix='osc-placement-packaging-')
        try:
            cls._install_and_record()
        except BaseException:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def _install_and_record(cls):
        client_wheel, server_wheel = _build_wheels(cls.tmp)
        venv = Venv(os.path.join(cls.tmp, 'venv'))
        venv.pip_install('openstack-placement==16.0.0')
        cls.upstream = cls._record_upstream(venv)

        venv.pip_install(client_wheel)
        cls.client_only = cls._record_upstream(venv)
        cls.our_scripts = venv.console_scripts('osc-placement')
        cls.monitoring_files = {
            name: _read(os.path.join(venv.path, name))
            for name in MONITORING_FILES}
        cls.help = {name: venv.run(name, '--help')
                    for name in cls.our_scripts}
        cls.serve_without_extra = venv.run(
            'placement-server', '--host', '127.0.0.1',
            '--port', str(_free_port()))

        # The deployer's choice: our server under upstream's names.
        venv.pip_install(server_wheel)
        cls.server_install = cls._record_upstream(venv)
        cls.server_scripts = venv.console_scripts('osc-placement-server')
        cls.server_help = {
            name: venv.run(name, '--help')
            for name in cls.server_scripts + ['placement-server']}

    @classmethod
    def _record_upstream(cls, venv):
        """What upstream's names are in the venv now: each command's
        script and each generator's whole output."""
        state = {command: venv.read_script(command)
                 for command in UPSTREAM_COMMANDS}
        for generator in GENERATORS:
            state[generator] = venv.run(*generator)
        return state

    def test_upstream_is_installed(self):
        # The baseline the other tests compare with is upstream's.
        for command in UPSTREAM_COMMANDS:
            self.assertIn('from placement.cmd', self.upstream[command])
        for generator in GENERATORS:
            self.assertEqual(0, self.upstream[generator][0], generator)

    def test_client_only_install_leaves_upstream_commands(self):
        for command in UPSTREAM_COMMANDS:
            self.assertEqual(self.upstream[command],
                             self.client_only[command], command)
            self.assertNotIn('osc_placement', self.client_only[command])

    def test_client_only_install_leaves_upstream_oslo_namespaces(self):
        for generator in GENERATORS:
            self.assertEqual(self.upstream[generator],
                             self.client_only[generator], generator)

    def test_client_only_install_has_client_commands_only(self):
        self.assertEqual(['placement', 'placement-server'],
                         self.our_scripts)

    def test_client_install_has_monitoring_files(self):
        for name, text in self.monitoring_files.items():
            self.assertEqual(_read(os.path.join(TOP, 'etc', *name.split(
                '/')[2:])), text, name)

    def test_every_script_of_ours_answers_help(self):
        for name, (status, out, err) in self.help.items():
            self.assertEqual(0, status, '%s --help: %s' % (name, err))
            self.assertIn('usage: %s' % name, out)
            self.assertNotIn('Traceback', out + err, name)

    def test_server_help_without_extra_names_it(self):
        status, out, err = self.help['placement-server']
        self.assertIn(INSTALL_EXTRA, out)

    def test_server_without_extra_says_which_to_install(self):
        status, out, err = self.serve_without_extra
        self.assertEqual(1, status, err)
        self.assertIn(INSTALL_EXTRA, err)
        self.assertNotIn('Traceback', err)

    def test_server_distribution_gives_upstream_names(self):
        self.assertEqual(sorted(UPSTREAM_COMMANDS), self.server_scripts)
        self.assertIn('from osc_placement.server.manage',
                      self.server_install['placement-manage'])
        self.assertIn('from osc_placement.server.status',
                      self.server_install['placement-status'])
        for name, (status, out, err) in self.server_help.items():
            self.assertEqual(0, status, '%s --help: %s' % (name, err))
            self.assertNotIn('Traceback', out + err, name)
        # With the extra, placement-server's own help, every option.
        self.assertIn('--database-connection',
                      self.server_help['placement-server'][1])
        self.assertNotIn(INSTALL_EXTRA,
                         self.server_help['placement-server'][1])

    def test_server_distribution_gives_our_config_options(self):
        status, out, err = self.server_install[GENERATORS[0]]
        self.assertEqual(0, status, err)
        # An option of ours that upstream's placement.conf has not.
        self.assertIn('#http_server = granian', out)
