# SPDX-License-Identifier: Apache-2.0
"""A real Keystone as a process, for the tests that serve Placement behind
it: Keystone's WSGI application under gunicorn from the virtualenv of its
own that ``tools/keystone-venv.sh`` builds (Keystone is never imported
here, nor a dependency of our package), on a free loopback port, with an
SQLite database and fernet keys in a temporary directory.

    keystone = Keystone(token_seconds=3600)
    keystone.start()
    keystone.populate()          # projects, users and roles of USERS
    token = keystone.token('project-member')
    keystone.stop()
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session

from benchmarks import local_server

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
VENV = os.environ.get('OSC_PLACEMENT_KEYSTONE_VENV',
                      os.path.join(TOP, '.venv-keystone'))
READY_TIMEOUT = 60
STOP_TIMEOUT = 15
ADMIN_PASSWORD = 'keystone-admin-secret'
PASSWORD = 'placement-test-secret'
REGION = 'RegionOne'
DOMAIN = 'default'
PROJECT = 'demo'
SERVICE_PROJECT = 'service'

# name: (role, scope). The scope is a project's name or 'system'. The
# placement user is the one the servers' keystonemiddleware validates
# tokens with, as a deployment's service user does.
USERS = {
    'project-admin': ('admin', PROJECT),
    'project-member': ('member', PROJECT),
    'project-reader': ('reader', PROJECT),
    'project-service': ('service', SERVICE_PROJECT),
    'system-admin': ('admin', 'system'),
    'system-reader': ('reader', 'system'),
    'placement': ('service', SERVICE_PROJECT),
}


class KeystoneFailed(RuntimeError):
    """Keystone could not be set up or started; carries its output."""


class Keystone:
    """One Keystone: its configuration, database and keys in ``state``,
    its API as a process while started."""

    def __init__(self, token_seconds=3600):
        if not os.path.exists(self._bin('keystone-manage')):
            # Never a skip: the suite exists to run.
            raise KeystoneFailed('no Keystone in %s: run '
                                 'tools/keystone-venv.sh' % VENV)
        self.state = tempfile.mkdtemp(prefix='ocp-keystone-')
        self.port = local_server.free_port()
        self.url = 'http://127.0.0.1:%d/v3' % self.port
        self.conf_path = self._write_conf(token_seconds)
        self.popen = None
        self.project_ids = {}
        self.placement_service = None
        self._bootstrap()

    def _bin(self, name):
        return os.path.join(VENV, 'bin', name)

    def _write_conf(self, token_seconds):
        path = os.path.join(self.state, 'keystone.conf')
        with open(path, 'w') as f:
            f.write(
                '[DEFAULT]\ndebug = False\n\n'
                '[database]\nconnection = sqlite:///%(state)s/keystone.db\n\n'
                '[token]\nprovider = fernet\nexpiration = %(seconds)d\n\n'
                '[fernet_tokens]\nkey_repository = %(state)s/fernet-keys\n\n'
                '[credential]\nkey_repository = %(state)s/credential-keys\n\n'
                # The fewest rounds bcrypt takes: hashing is not under test.
                '[identity]\npassword_hash_rounds = 4\n' % {
                    'state': self.state, 'seconds': token_seconds})
        return path

    def _manage(self, *args):
        done = subprocess.run(
            [self._bin('keystone-manage'), '--config-file', self.conf_path]
            + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=self._env(), timeout=300)
        if done.returncode:
            raise KeystoneFailed('keystone-manage %s exited %d:\n%s' % (
                ' '.join(args), done.returncode, done.stdout))

    def _env(self):
        env = dict(os.environ)
        env['OS_KEYSTONE_CONFIG_FILES'] = self.conf_path
        # Our tree is not Keystone's business.
        env.pop('PYTHONPATH', None)
        return env

    def _bootstrap(self):
        self._manage('db_sync')
        owner = ['--keystone-user', str(os.getuid()),
                 '--keystone-group', str(os.getgid())]
        self._manage('fernet_setup', *owner)
        self._manage('credential_setup', *owner)
        self._manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                     '--bootstrap-admin-url', self.url,
                     '--bootstrap-internal-url', self.url,
                     '--bootstrap-public-url', self.url,
                     '--bootstrap-region-id', REGION)

    def _write_app(self):
        # Keystone's configuration parses sys.argv, which under gunicorn
        # holds gunicorn's arguments: the application is loaded without.
        with open(os.path.join(self.state, 'keystone_app.py'), 'w') as f:
            f.write('import sys\n'
                    'sys.argv = sys.argv[:1]\n'
                    'from keystone.wsgi.api import application  # noqa\n')

    def start(self):
        """Serve the API; return once it answers."""
        self._write_app()
        log = open(os.path.join(self.state, 'keystone.log'), 'a')
        with log:
            self.popen = subprocess.Popen(
                [self._bin('gunicorn'), '--no-control-socket',
                 '-b', '127.0.0.1:%d' % self.port, '-w', '1',
                 '-k', 'gthread', '--threads', '4', '--chdir', self.state,
                 'keystone_app:application'],
                stdout=log, stderr=subprocess.STDOUT, env=self._env(),
                cwd=self.state, start_new_session=True)
        try:
            local_server.wait_until_ready(self.popen, self.url, '',
                                          READY_TIMEOUT)
        except RuntimeError as exc:
            raise KeystoneFailed('%s; its log ends:\n%s' % (
                exc, self.log_tail())) from exc

    def restart(self, token_seconds=None):
        """Stopped and started again, its tokens lasting
        ``token_seconds`` from now on when given."""
        self.stop()
        if token_seconds is not None:
            self._write_conf(token_seconds)
        self.start()

    def stop(self):
        if self.popen is not None:
            stop_process(self.popen)
            self.popen = None

    def remove(self):
        self.stop()
        shutil.rmtree(self.state, ignore_errors=True)

    def log_tail(self, lines=40):
        try:
            with open(os.path.join(self.state, 'keystone.log')) as f:
                return ''.join(f.readlines()[-lines:])
        except OSError:
            return ''

    # The identity API, as the bootstrap administrator.

    def _admin_token(self):
        return self.token_of('admin', ADMIN_PASSWORD, 'system')

    def api(self, method, path, body=None, token=None, headers=None):
        """(status, decoded JSON or None) of a call to Keystone's API."""
        all_headers = {'X-Auth-Token': token or self._admin_token(),
                       'Content-Type': 'application/json'}
        all_headers.update(headers or {})
        req = urllib.request.Request(
            self.url + path, method=method, headers=all_headers,
            data=json.dumps(body).encode() if body is not None else None)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors='replace')

    def _created(self, path, kind, body, token):
        status, answer = self.api('POST', path, {kind: body}, token)
        if status != 201:
            raise KeystoneFailed('POST %s %s -> %s %s' % (
                path, body, status, answer))
        return answer[kind]['id']

    def _role_ids(self, token):
        status, answer = self.api('GET', '/roles', token=token)
        roles = {role['name']: role['id'] for role in answer['roles']}
        for name in ('admin', 'member', 'reader', 'service'):
            if name not in roles:
                roles[name] = self._created('/roles', 'role',
                                            {'name': name}, token)
        return roles

    def populate(self):
        """The projects and users of USERS with their roles, and the
        placement service in the catalog."""
        token = self._admin_token()
        roles = self._role_ids(token)
        for project in (PROJECT, SERVICE_PROJECT):
            self.project_ids[project] = self._created(
                '/projects', 'project',
                {'name': project, 'domain_id': DOMAIN}, token)
        for name, (role, scope) in sorted(USERS.items()):
            user_id = self._created('/users', 'user', {
                'name': name, 'password': PASSWORD, 'domain_id': DOMAIN},
                token)
            if scope == 'system':
                target = '/system'
            else:
                target = '/projects/%s' % self.project_ids[scope]
            path = '%s/users/%s/roles/%s' % (target, user_id, roles[role])
            status, answer = self.api('PUT', path, token=token)
            if status != 204:
                raise KeystoneFailed('role %s on %s for %s -> %s %s' % (
                    role, scope, name, status, answer))
        self.placement_service = self._created('/services', 'service', {
            'name': 'placement', 'type': 'placement'}, token)

    def register_placement(self, region, url):
        """``url`` in the catalog as placement's public endpoint in
        ``region``, which is created."""
        token = self._admin_token()
        self._created('/regions', 'region', {'id': region}, token)
        self._created('/endpoints', 'endpoint', {
            'service_id': self.placement_service, 'interface': 'public',
            'region_id': region, 'url': url}, token)

    # Tokens, as clients get them: keystoneauth1's password plugin.

    def auth(self, user, password=PASSWORD, scope=None):
        """keystoneauth1's password plugin for ``user``, scoped as USERS
        says unless ``scope`` is given."""
        scope = scope or USERS[user][1]
        kwargs = {'auth_url': self.url, 'username': user,
                  'password': password, 'user_domain_id': DOMAIN}
        if scope == 'system':
            kwargs['system_scope'] = 'all'
        else:
            kwargs.update(project_name=scope, project_domain_id=DOMAIN)
        return v3.Password(**kwargs)

    def session(self, user, password=PASSWORD, scope=None):
        return ks_session.Session(auth=self.auth(user, password, scope))

    def token_of(self, user, password=PASSWORD, scope=None):
        return self.session(user, password, scope).get_token()

    def token(self, user):
        return self.token_of(user)

    def revoke(self, token):
        """DELETE /v3/auth/tokens: ``token`` revoked."""
        status, answer = self.api('DELETE', '/auth/tokens',
                                  headers={'X-Subject-Token': token})
        if status != 204:
            raise KeystoneFailed('revoking -> %s %s' % (status, answer))

    def authtoken_section(self):
        """``[keystone_authtoken]`` of a placement.conf that validates
        tokens with this Keystone as the placement user, with no cache:
        a revoked token must be refused on its next use."""
        return ('[keystone_authtoken]\n'
                'www_authenticate_uri = %(url)s\n'
                'auth_url = %(url)s\n'
                'auth_type = password\n'
                'username = placement\n'
                'password = %(password)s\n'
                'user_domain_id = %(domain)s\n'
                'project_name = %(project)s\n'
                'project_domain_id = %(domain)s\n'
                'region_name = %(region)s\n'
                'token_cache_time = -1\n'
                'service_token_roles_required = True\n' % {
                    'url': self.url, 'password': PASSWORD,
                    'domain': DOMAIN, 'project': SERVICE_PROJECT,
                    'region': REGION})


def stop_process(popen):
    """SIGTERM to the process's session, SIGKILL if it lingers."""
    if popen.poll() is None:
        try:
            os.killpg(popen.pid, signal.SIGTERM)
            popen.wait(timeout=STOP_TIMEOUT)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()


def wait_for(predicate, seconds):
    """Poll ``predicate`` until true or ``seconds`` pass; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)
