# SPDX-License-Identifier: Apache-2.0
"""The ``placement`` shell: options, environment, auth, and what it imports.

Requests go nowhere here (the functional tests run the shell against the
embedded server); an endpoint that refuses connections shows which
endpoint a run would have used.
"""

import io
import os
import subprocess
import sys
import tempfile
import textwrap

import fixtures
from keystoneauth1 import noauth
from keystoneauth1 import token_endpoint
from osc_lib import exceptions as osc_exc
import testtools

from osc_placement import shell

# Nothing listens on the discard port; a connection is refused at once.
DEAD_ENDPOINT = 'http://127.0.0.1:9'
# Every variable the shell reads, cleared so the host's don't leak in.
SHELL_ENV = ('OS_CLOUD', 'OS_AUTH_TYPE', 'OS_TOKEN', 'OS_ENDPOINT',
             'OS_AUTH_URL', 'OS_USERNAME', 'OS_USER_ID', 'OS_PASSWORD',
             'OS_PROJECT_NAME', 'OS_PROJECT_ID', 'OS_TENANT_NAME',
             'OS_TENANT_ID', 'OS_USER_DOMAIN_NAME', 'OS_USER_DOMAIN_ID',
             'OS_PROJECT_DOMAIN_NAME', 'OS_PROJECT_DOMAIN_ID',
             'OS_DEFAULT_DOMAIN', 'OS_REGION_NAME', 'OS_INTERFACE',
             'OS_CACERT', 'OS_CERT', 'OS_KEY', 'OS_PLACEMENT_API_VERSION',
             'OS_IDENTITY_API_VERSION', 'OS_CLIENT_CONFIG_FILE',
             'OS_APPLICATION_CREDENTIAL_ID',
             'OS_APPLICATION_CREDENTIAL_SECRET')


class ShellTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        for name in SHELL_ENV:
            self.useFixture(fixtures.EnvironmentVariable(name))

    def env(self, **variables):
        for name, value in variables.items():
            self.useFixture(fixtures.EnvironmentVariable(name, value))

    def parse(self, *argv):
        """Global options as the shell parses them (env read at build)."""
        options, _ = shell.PlacementShell().parser.parse_known_args(
            list(argv))
        return options

    def run_shell(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', out), \
                fixtures.MonkeyPatch('sys.stderr', err):
            try:
                code = shell.PlacementShell().run(list(argv))
            except SystemExit as exit_:
                code = exit_.code
        return code, out.getvalue(), err.getvalue()


class TestTokenEndpointOptions(ShellTestCase):

    def test_environment_gives_token_endpoint_auth(self):
        self.env(OS_TOKEN='secret', OS_ENDPOINT='http://placement.test')
        options = self.parse()
        self.assertEqual('admin_token', shell.resolve_auth_type(options))
        auth = shell.build_auth(options)
        self.assertIsInstance(auth, token_endpoint.Token)
        self.assertEqual('http://placement.test', auth.endpoint)
        self.assertEqual('secret', auth.token)

    def test_options_win_over_environment(self):
        self.env(OS_TOKEN='from-env', OS_ENDPOINT='http://env.test')
        auth = shell.build_auth(self.parse(
            '--os-token', 'from-option', '--os-endpoint', 'http://opt.test'))
        self.assertEqual(('from-option', 'http://opt.test'),
                         (auth.token, auth.endpoint))

    def test_token_endpoint_is_admin_token(self):
        auth = shell.build_auth(self.parse(
            '--os-auth-type', 'token_endpoint', '--os-token', 't',
            '--os-endpoint', 'http://p.test'))
        self.assertIsInstance(auth, token_endpoint.Token)

    def test_auth_type_from_environment(self):
        self.env(OS_AUTH_TYPE='none', OS_ENDPOINT='http://p.test')
        auth = shell.build_auth(self.parse())
        self.assertIsInstance(auth, noauth.NoAuth)
        self.assertEqual('http://p.test', auth.endpoint)

    def test_token_without_endpoint_is_password(self):
        # As openstack chooses: admin_token only with both.
        self.assertEqual('password', shell.resolve_auth_type(
            self.parse('--os-token', 't')))

    def test_admin_token_names_what_is_missing(self):
        error = self.assertRaises(
            osc_exc.CommandError, shell.build_auth,
            self.parse('--os-auth-type', 'admin_token', '--os-token', 't'))
        self.assertIn('Set an endpoint with --os-endpoint or OS_ENDPOINT',
                      str(error))
        self.assertNotIn('token with', str(error))


class TestPlacementVersionOption(ShellTestCase):

    def test_default_negotiates(self):
        self.assertEqual('1', self.parse().os_placement_api_version)

    def test_environment(self):
        self.env(OS_PLACEMENT_API_VERSION='1.20')
        self.assertEqual('1.20', self.parse().os_placement_api_version)

    def test_client_manager_gets_the_requested_version(self):
        self.env(OS_PLACEMENT_API_VERSION='1.20')
        placement = shell.PlacementShell()
        placement.options, _ = placement.parser.parse_known_args(
            ['--os-region-name', 'R2', '--os-interface', 'internal'])
        placement.initialize_app([])
        manager = placement.client_manager
        self.assertEqual({'placement': '1.20'}, manager._api_version)
        self.assertEqual(('R2', 'internal'),
                         (manager.region_name, manager.interface))
        self.assertIsNone(manager.session)

    def test_unsupported_version_fails_before_any_request(self):
        code, out, err = self.run_shell(
            '--os-placement-api-version', '1.99', '--os-token', 't',
            '--os-endpoint', DEAD_ENDPOINT, 'resource', 'provider', 'list')
        self.assertEqual(1, code)
        self.assertIn("Unsupported placement API version '1.99'", err)
        self.assertNotIn('could not be reached', err)


class TestPasswordAuth(ShellTestCase):

    def test_password_gets_default_domains(self):
        auth = shell.build_auth(self.parse(
            '--os-auth-url', 'http://keystone.test/v3', '--os-username', 'u',
            '--os-password', 'p', '--os-project-name', 'demo'))
        self.assertEqual(('u', 'p', 'demo', 'default', 'default'), (
            auth._username, auth._password, auth._project_name,
            auth._user_domain_id, auth._project_domain_id))

    def test_environment_and_tenant_fallback(self):
        self.env(OS_AUTH_URL='http://keystone.test/v3', OS_USERNAME='u',
                 OS_PASSWORD='p', OS_TENANT_NAME='old',
                 OS_USER_DOMAIN_NAME='Users', OS_DEFAULT_DOMAIN='d2')
        auth = shell.build_auth(self.parse('--os-auth-type', 'v3password'))
        method = auth.auth_methods[0]
        self.assertEqual(('u', 'Users', None), (
            method.username, method.user_domain_name, method.user_domain_id))
        self.assertEqual(('old', 'd2'), (auth.project_name,
                                         auth.project_domain_id))

    def test_missing_auth_url_as_openstack_says_it(self):
        error = self.assertRaises(osc_exc.CommandError, shell.build_auth,
                                  self.parse('--os-username', 'u'))
        self.assertEqual('Missing value auth-url required for auth plugin '
                         'password', str(error))

    def test_missing_username_as_openstack_says_it(self):
        error = self.assertRaises(osc_exc.CommandError, shell.build_auth,
                                  self.parse('--os-auth-url', 'http://k/v3',
                                             '--os-password', 'p'))
        self.assertEqual(
            'Missing parameter(s): \nSet a username with --os-username, '
            'OS_USERNAME, or auth.username or set a user-id with '
            '--os-user-id, OS_USER_ID, or auth.user_id', str(error))

    def test_no_password_without_terminal(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stdin', io.StringIO()))
        error = self.assertRaises(osc_exc.CommandError, shell.build_auth,
                                  self.parse('--os-auth-url', 'http://k/v3',
                                             '--os-username', 'u'))
        self.assertEqual('No password entered, or found via --os-password '
                         'or OS_PASSWORD', str(error))

    def test_application_credential(self):
        auth = shell.build_auth(self.parse(
            '--os-auth-type', 'v3applicationcredential',
            '--os-auth-url', 'http://keystone.test/v3',
            '--os-application-credential-id', 'cred',
            '--os-application-credential-secret', 'sec'))
        method = auth.auth_methods[0]
        self.assertEqual(('cred', 'sec'), (
            method.application_credential_id,
            method.application_credential_secret))

    def test_listed_auth_types_have_all_their_options(self):
        from keystoneauth1 import loading
        # Compared by dest: the value is read from the parsed options
        # under the plugin option's dest.
        listed = {name.replace('-', '_') for name, _ in shell.AUTH_OPTIONS}
        for auth_type in shell.LISTED_AUTH:
            if auth_type == 'token_endpoint':
                continue  # openstack's other name for admin_token
            dests = {opt.dest for opt in
                     loading.get_plugin_loader(auth_type).get_options()}
            self.assertEqual(set(), dests - listed, auth_type)

    def test_other_auth_types_get_their_options(self):
        # v3totp's --os-passcode is not in AUTH_OPTIONS; it is registered
        # once --os-auth-type names the type.
        code, out, err = self.run_shell(
            '--os-auth-type', 'v3totp', '--os-auth-url', 'http://k/v3',
            '--os-username', 'u', '--os-passcode', '123456',
            '--os-project-name', 'p', 'resource', 'provider', 'list')
        self.assertEqual(1, code)
        self.assertNotIn('unrecognized', err)
        self.assertIn('http://k/v3', err)  # it tried to authenticate

    def test_unknown_auth_type(self):
        code, out, err = self.run_shell('--os-auth-type', 'nonsense',
                                        'resource', 'provider', 'list')
        self.assertEqual(1, code)
        self.assertIn('Unknown auth type nonsense', err)


class TestTransportOptions(ShellTestCase):

    def test_insecure_wins(self):
        self.assertFalse(shell.verify_setting(self.parse(
            '--insecure', '--os-cacert', '/ca.pem')))

    def test_cacert_from_environment(self):
        self.env(OS_CACERT='/etc/ca.pem')
        self.assertEqual('/etc/ca.pem', shell.verify_setting(self.parse()))

    def test_verify_by_default(self):
        self.assertIs(True, shell.verify_setting(self.parse()))

    def test_client_certificate_and_key(self):
        self.assertEqual(('/c.pem', '/k.pem'), shell.cert_setting(
            self.parse('--os-cert', '/c.pem', '--os-key', '/k.pem')))


class TestCommandsAndOutput(ShellTestCase):

    def test_version(self):
        code, out, err = self.run_shell('--version')
        self.assertEqual(0, code)
        self.assertTrue((out + err).startswith('placement '), out + err)

    def test_help_lists_every_placement_entry_point(self):
        from importlib import metadata
        names = {ep.name.replace('_', ' ') for ep in
                 metadata.entry_points(group=shell.COMMAND_GROUP)}
        code, out, err = self.run_shell('help')
        self.assertEqual(0, code, err)
        listed = {line.strip().split('  ')[0] for line in out.splitlines()
                  if line.startswith('  ')}
        self.assertTrue(names, 'no placement entry points found')
        self.assertEqual(set(), names - listed)

    def test_command_help_needs_no_auth_and_sends_nothing(self):
        code, out, err = self.run_shell('resource', 'provider', 'list',
                                        '--help')
        self.assertEqual(0, code, err)
        self.assertIn('usage: placement resource provider list', out)
        self.assertIn('--in-tree', out)  # options of the newest version

    def test_connection_error_names_the_endpoint(self):
        code, out, err = self.run_shell(
            '--os-token', 't', '--os-endpoint', DEAD_ENDPOINT,
            'resource', 'provider', 'list')
        self.assertEqual(1, code)
        self.assertIn('The Placement service at %s could not be reached'
                      % DEAD_ENDPOINT, err)


def _python(code, env=None):
    """Run ``code`` in a fresh interpreter; its stdout, stripped."""
    full_env = {key: value for key, value in os.environ.items()
                if key not in SHELL_ENV}
    full_env.update(env or {})
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(code)],
                          capture_output=True, text=True, env=full_env,
                          timeout=120)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    return done.stdout.strip()


# Runs the shell in a fresh interpreter, then prints which of the heavy
# packages it imported. The command fails to connect, which is fine: the
# point is everything the shell does up to the request.
_HEAVY_IMPORTS = '''
import sys
from osc_placement import shell
code = shell.main(sys.argv[1:] if len(sys.argv) > 1 else %r)
heavy = sorted({name.split('.')[0] for name in sys.modules}
               & {'openstack', 'openstackclient'})
print(code, ' '.join(heavy) or '-')
'''


class TestImports(ShellTestCase):
    """The point of the command: openstackclient and openstacksdk stay out.
    """

    def heavy_imports(self, argv, env=None):
        return _python(_HEAVY_IMPORTS % (argv,), env).splitlines()[-1]

    def test_importing_the_shell(self):
        heavy = _python('''
            import sys
            import osc_placement.shell
            print(sorted({n.split('.')[0] for n in sys.modules}
                         & {'openstack', 'openstackclient'}))
        ''')
        self.assertEqual('[]', heavy)

    def test_a_whole_run_with_token_auth(self):
        self.assertEqual('1 -', self.heavy_imports(
            ['--os-token', 't', '--os-endpoint', DEAD_ENDPOINT,
             'resource', 'provider', 'list']))

    def test_a_whole_run_with_password_auth(self):
        self.assertEqual('1 -', self.heavy_imports(
            ['--os-auth-url', DEAD_ENDPOINT + '/v3', '--os-username', 'u',
             '--os-password', 'p', '--os-project-name', 'p',
             'resource', 'provider', 'list']))

    def test_clouds_yaml_only_with_os_cloud(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'clouds.yaml')
            with open(path, 'w') as clouds:
                clouds.write(textwrap.dedent('''\
                    clouds:
                      dead:
                        auth_type: admin_token
                        auth:
                          token: t
                          endpoint: %s
                ''' % DEAD_ENDPOINT))
            env = {'OS_CLIENT_CONFIG_FILE': path}
            argv = ['resource', 'provider', 'list']
            # Without --os-cloud: no clouds.yaml, so nothing to auth with.
            self.assertEqual('1 -', self.heavy_imports(argv, env))
            # With it: openstack.config reads the file and its endpoint is
            # the one tried.
            self.assertEqual('1 openstack', self.heavy_imports(
                ['--os-cloud', 'dead'] + argv, env))
            env['OS_CLOUD'] = 'dead'
            self.assertEqual('1 openstack',
                             self.heavy_imports(argv, env))

    def test_os_cloud_uses_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'clouds.yaml')
            with open(path, 'w') as clouds:
                clouds.write(textwrap.dedent('''\
                    clouds:
                      dead:
                        auth_type: admin_token
                        auth:
                          token: t
                          endpoint: %s/from-clouds-yaml
                ''' % DEAD_ENDPOINT))
            self.env(OS_CLIENT_CONFIG_FILE=path)
            code, out, err = self.run_shell('--os-cloud', 'dead', 'resource',
                                            'provider', 'list')
        self.assertEqual(1, code)
        self.assertIn('%s/from-clouds-yaml could not be reached'
                      % DEAD_ENDPOINT, err)
