# SPDX-License-Identifier: Apache-2.0
"""The standalone ``placement`` command against the ``openstack`` shell.

Both shells run the same command classes; these tests run each command
through both, against the same server state, and require the same output,
exit code and error text.
"""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import uuid

import fixtures
from keystoneauth1 import fixture as ks_fixture
from openstackclient import shell as osc_shell
from wsgi_intercept import interceptor

from osc_placement import shell as placement_shell
from tests.functional import base

FORMATS = (['-f', 'json'], ['-f', 'table'], ['-f', 'value'], ['-f', 'csv'],
           ['-f', 'yaml'], ['-f', 'value', '-c', 'name', '-c', 'uuid'])


def run_shell(make_shell, argv):
    """Run a shell in-process with exactly ``argv``; a base.Result."""
    base.forget_cached_placement_client()
    out, err = io.StringIO(), io.StringIO()
    with fixtures.MonkeyPatch('sys.stdout', out), \
            fixtures.MonkeyPatch('sys.stderr', err):
        try:
            code = make_shell().run(argv)
        except SystemExit as exit_:
            code = exit_.code
    base.forget_cached_placement_client()
    return base.Result(code, out.getvalue(), err.getvalue())


def without_request_ids(stderr):
    """Two runs of a failing command differ in their requests' ids only."""
    return re.sub(base.REQUEST_ID, '', stderr)


class TestSameAsOpenstack(base.FunctionalTestCase):

    def both(self, command, version=None):
        """(openstack result, placement result) for one command."""
        argv = command.split() if isinstance(command, str) else command
        return (self.run_openstack(argv, version),
                self.run_placement(argv, version))

    def assertSame(self, command, version=None, code=0):
        """Both shells exit ``code`` and print the same; the result."""
        theirs, ours = self.both(command, version)
        self.assertEqual(code, theirs.code, theirs.stderr)
        self.assertEqual(
            (theirs.code, theirs.stdout, without_request_ids(theirs.stderr)),
            (ours.code, ours.stdout, without_request_ids(ours.stderr)))
        return ours

    def placement_cmd(self, command, version=None):
        """Run ``placement command -f json``; fail unless it succeeds."""
        result = self.run_placement(command.split() + ['-f', 'json'],
                                    version)
        self.assertEqual(0, result.code, result.stderr)
        return json.loads(result.stdout)

    def test_create_then_list_and_show_in_every_format(self):
        name = self.unique('front')
        created = self.placement_cmd('resource provider create %s' % name)
        self.assertEqual(name, created['name'])
        child = self.placement_cmd(
            'resource provider create %s --parent-provider %s'
            % (self.unique('front-child'), created['uuid']), version='1.14')
        for output in FORMATS:
            listed = self.assertSame(
                ['resource', 'provider', 'list', '--in-tree',
                 created['uuid']] + output)
            self.assertIn(child['uuid'], listed.stdout)
        for output in FORMATS[:3]:
            self.assertSame(['resource', 'provider', 'show',
                             created['uuid']] + output)

    def test_inventory_set_and_candidates(self):
        rp = self.create_provider()
        self.placement_cmd('resource provider inventory set %s '
                           '--resource VCPU=8 --resource MEMORY_MB=4096 '
                           '--resource VCPU:allocation_ratio=4' % rp['uuid'])
        listed = self.assertSame('resource provider inventory list %s -f json'
                                 % rp['uuid'])
        inventories = {row['resource_class']: row
                       for row in json.loads(listed.stdout)}
        self.assertEqual((8, 4.0), (inventories['VCPU']['total'],
                                    inventories['VCPU']['allocation_ratio']))
        self.assertSame('resource provider inventory list %s' % rp['uuid'])
        command = ('allocation candidate list --resource VCPU=30 '
                   '--resource MEMORY_MB=1024 --in-tree %s' % rp['uuid'])
        found = self.assertSame(command + ' -f json', version='1.31')
        self.assertEqual([rp['uuid']], [row['resource provider']
                                        for row in json.loads(found.stdout)])
        self.assertSame(command, version='1.31')

    def test_unknown_provider_fails_alike(self):
        result = self.assertSame(
            'resource provider show %s' % uuid.uuid4(), code=1)
        self.assertIn('No resource provider with uuid', result.stderr)

    def test_version_gate_fails_alike(self):
        result = self.assertSame('resource provider list --in-tree %s'
                                 % uuid.uuid4(), version='1.13', code=1)
        self.assertIn('Operation or argument is not supported with version '
                      '1.13; requires at least version 1.14', result.stderr)

    def test_unsupported_version_fails_alike(self):
        result = self.assertSame('resource provider list', version='1.99',
                                 code=1)
        self.assertIn("Unsupported placement API version '1.99'",
                      result.stderr)

    def test_usage_error_exits_2_alike(self):
        theirs, ours = self.both('resource provider list --bogus')
        self.assertEqual((2, 2), (theirs.code, ours.code))
        # In-process, openstack names itself after sys.argv[0] (the test
        # runner); the error after the program name is what must match.
        self.assertTrue(ours.stderr.endswith(
            '\nplacement resource provider list: error: unrecognized '
            'arguments: --bogus\n'), ours.stderr)
        self.assertEqual(theirs.stderr.splitlines()[-1].split(': ', 1)[1],
                         ours.stderr.splitlines()[-1].split(': ', 1)[1])

    def test_negotiation_sends_the_same_requests(self):
        self.pretend_server_max('1.20')
        calls = self.record_requests()
        self.create_provider(version='1.20')
        del calls[:]
        theirs, ours = self.both('resource provider list -f json')
        half = len(calls) // 2
        self.assertEqual(calls[:half], calls[half:])
        self.assertEqual(
            ['placement 1.39', 'placement 1.20'],
            [microversion for _, _, microversion in calls[half:]])
        self.assertEqual((0, theirs.stdout), (ours.code, ours.stdout))


class TestCloudsYaml(base.FunctionalTestCase):

    def test_os_cloud_reads_clouds_yaml_alike(self):
        rp = self.create_provider()
        tmp = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tmp, 'clouds.yaml')
        with open(path, 'w') as clouds:
            clouds.write(textwrap.dedent('''\
                clouds:
                  functional:
                    auth_type: admin_token
                    auth:
                      token: admin
                      endpoint: %s
                    placement_api_version: '1.39'
            ''' % self.placement.endpoint))
        self.useFixture(fixtures.EnvironmentVariable('OS_CLIENT_CONFIG_FILE',
                                                     path))
        argv = ['--os-cloud', 'functional', 'resource', 'provider', 'show',
                rp['uuid'], '-f', 'json']
        theirs = run_shell(osc_shell.OpenStackShell, argv)
        ours = run_shell(placement_shell.PlacementShell, argv)
        self.assertEqual(0, ours.code, ours.stderr)
        self.assertEqual(rp['name'], json.loads(ours.stdout)['name'])
        self.assertEqual((theirs.code, theirs.stdout), (ours.code,
                                                        ours.stdout))


def _fake_keystone(catalog_endpoints, password):
    """A WSGI Identity v3 service: discovery and password tokens.

    There is no Keystone here; this answers the two requests a password
    login makes, with a catalogue listing ``catalog_endpoints``
    ({(region, interface): url}) for Placement. The token it issues is
    ``admin``, which the embedded server accepts.
    """
    def app(environ, start_response):
        path = environ['PATH_INFO'].rstrip('/')
        if environ['REQUEST_METHOD'] == 'GET' and path == '/v3':
            body = ks_fixture.V3Discovery('http://%s/v3/' % environ[
                'HTTP_HOST'])
            return answer(start_response, '200 OK', {'version': body})
        if environ['REQUEST_METHOD'] == 'POST' and path == '/v3/auth/tokens':
            length = int(environ.get('CONTENT_LENGTH') or 0)
            request = json.loads(environ['wsgi.input'].read(length))
            given = request['auth']['identity']['password']['user']
            if given.get('password') != password:
                return answer(start_response, '401 Unauthorized', {
                    'error': {'code': 401, 'title': 'Unauthorized',
                              'message': 'The request you have made '
                                         'requires authentication.'}})
            token = ks_fixture.V3Token(project_name='demo',
                                       project_domain_id='default',
                                       user_name=given['name'],
                                       user_domain_id='default')
            service = token.add_service('placement')
            for (region, interface), url in catalog_endpoints.items():
                service.add_endpoint(interface, url, region=region)
            return answer(start_response, '201 Created', token,
                          [('X-Subject-Token', 'admin')])
        return answer(start_response, '404 Not Found', {})

    def answer(start_response, status, body, headers=()):
        start_response(status, [('Content-Type', 'application/json')]
                       + list(headers))
        return [json.dumps(body).encode()]

    return app


class TestPasswordAuth(base.FunctionalTestCase):
    """Password login, catalogue, region and interface, for real."""

    def setUp(self):
        super().setUp()
        if self.placement.intercept is None:
            self.skipTest('the fake Identity service needs the in-process '
                          'server')
        host = 'keystone-%s.test' % uuid.uuid4().hex[:12]
        nowhere = 'http://nowhere-%s.test' % uuid.uuid4().hex[:12]
        app = _fake_keystone({('RegionOne', 'public'): nowhere,
                              ('RegionTwo', 'public'): nowhere,
                              ('RegionTwo', 'internal'):
                                  self.placement.endpoint},
                             password='secret')
        intercept = interceptor.RequestsInterceptor(lambda: app, host=host,
                                                    port=80)
        intercept.__enter__()
        self.addCleanup(intercept.__exit__, None, None, None)
        self.auth = ['--os-auth-url', 'http://%s/v3' % host,
                     '--os-username', 'operator', '--os-project-name',
                     'demo']
        self.nowhere = nowhere

    def test_region_and_interface_pick_the_endpoint(self):
        rp = self.create_provider()
        argv = self.auth + ['--os-password', 'secret', '--os-region-name',
                            'RegionTwo', '--os-interface', 'internal',
                            'resource', 'provider', 'show', rp['uuid'],
                            '-f', 'json']
        ours = run_shell(placement_shell.PlacementShell, argv)
        self.assertEqual(0, ours.code, ours.stderr)
        self.assertEqual(rp['uuid'], json.loads(ours.stdout)['uuid'])
        theirs = run_shell(osc_shell.OpenStackShell, argv)
        self.assertEqual((theirs.code, theirs.stdout),
                         (ours.code, ours.stdout))

    def test_region_and_interface_from_the_environment(self):
        for name, value in (('OS_REGION_NAME', 'RegionTwo'),
                            ('OS_INTERFACE', 'internal'),
                            ('OS_PASSWORD', 'secret')):
            self.useFixture(fixtures.EnvironmentVariable(name, value))
        ours = run_shell(placement_shell.PlacementShell, self.auth + [
            'resource', 'provider', 'list', '-f', 'json'])
        self.assertEqual(0, ours.code, ours.stderr)
        self.assertIsInstance(json.loads(ours.stdout), list)

    def test_default_interface_is_public(self):
        ours = run_shell(placement_shell.PlacementShell, self.auth + [
            '--os-password', 'secret', '--os-region-name', 'RegionTwo',
            'resource', 'provider', 'list'])
        self.assertEqual(1, ours.code)
        self.assertIn(self.nowhere, ours.stderr)

    def test_wrong_password_fails_alike(self):
        argv = self.auth + ['--os-password', 'wrong', 'resource',
                            'provider', 'list']
        ours = run_shell(placement_shell.PlacementShell, argv)
        theirs = run_shell(osc_shell.OpenStackShell, argv)
        self.assertEqual(1, ours.code)
        self.assertIn('The request you have made requires authentication',
                      ours.stderr)
        self.assertEqual((theirs.code, theirs.stderr),
                         (ours.code, ours.stderr))


class TestRealProcess(base.FunctionalTestCase):
    """The installed console script, as a process, against a server
    process, configured only through OS_* variables."""

    def setUp(self):
        super().setUp()
        if self.placement.intercept is None:
            self.url = self.placement.endpoint  # already a real server
        else:
            self.url = base._process_url()
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith('OS_')}
        self.env.update(OS_AUTH_TYPE='admin_token', OS_TOKEN='admin',
                        OS_ENDPOINT=self.url,
                        OS_PLACEMENT_API_VERSION='1.39')

    def command(self, name, *argv):
        path = os.path.join(os.path.dirname(sys.executable), name)
        if not os.path.exists(path):
            path = shutil.which(name)
        if not path:
            self.skipTest('no %s command installed' % name)
        return subprocess.run([path] + list(argv), capture_output=True,
                              text=True, env=self.env, timeout=120)

    def test_console_script_matches_openstack(self):
        name = self.unique('process')
        created = self.command('placement', 'resource', 'provider', 'create',
                               name, '-f', 'json')
        self.assertEqual(0, created.returncode, created.stderr)
        rp = json.loads(created.stdout)
        self.assertEqual(name, rp['name'])
        show = ['resource', 'provider', 'show', rp['uuid'], '-f', 'yaml']
        ours, theirs = self.command('placement', *show), \
            self.command('openstack', *show)
        self.assertEqual((0, theirs.stdout), (ours.returncode, ours.stdout))
        missing = ['resource', 'provider', 'show', str(uuid.uuid4())]
        ours, theirs = self.command('placement', *missing), \
            self.command('openstack', *missing)
        self.assertEqual(1, ours.returncode)
        self.assertEqual(
            (theirs.returncode, without_request_ids(theirs.stderr)),
            (ours.returncode, without_request_ids(ours.stderr)))
