# SPDX-License-Identifier: Apache-2.0
"""Functional tests: the real ``openstack`` shell against our server.

By default each test gets the embedded server in-process, reached through
wsgi-intercept (no socket), on a database emptied for it: SQLite, or the
PostgreSQL/MariaDB server named by OSC_PLACEMENT_TEST_DB_URL (one database
per test process, created once, tables emptied per test).

Two other modes, for CI jobs that want to test a deployed server:

* ``OSC_PLACEMENT_FUNCTIONAL_SERVER=process`` starts
  ``python -m osc_placement.server`` on an ephemeral loopback port, once per
  test process;
* ``OSC_PLACEMENT_FUNCTIONAL_URL=http://host:port`` uses a server that is
  already running (it must accept the token ``admin``).

In those modes the database is shared between tests, which is why every
test names its providers, classes and traits uniquely.
"""

import contextlib
import io
import json
import logging
import os
import shlex
import subprocess
import sys
import urllib.parse
import uuid

import fixtures
from openstackclient import shell as osc_shell
from osc_lib import clientmanager
import requests
import testtools
from wsgi_intercept import interceptor

from benchmarks import local_server
from osc_placement import http as client_http

URL_ENV = 'OSC_PLACEMENT_FUNCTIONAL_URL'
MODE_ENV = 'OSC_PLACEMENT_FUNCTIONAL_SERVER'
_process = {'url': None, 'popen': None}

# Set-up requests (providers, inventories, traits, ...) are sent at this
# microversion, so a test class pinned to an old VERSION can still build
# its providers; only the command under test runs at VERSION.
SETUP_VERSION = '1.39'

# What ends the text of a failed request: the id the server gave it.
REQUEST_ID = r' \(Request-ID: req-[0-9a-f-]{36}\)'

# The client's message when a command or option needs a newer version.
GATE = ('Operation or argument is not supported with version %s; '
        'requires at least version %s')


class CommandFailed(Exception):
    def __init__(self, argv, result):
        super().__init__('openstack %s exited %s\nstdout: %s\nstderr: %s' % (
            ' '.join(argv), result.code, result.stdout, result.stderr))
        self.result = result


class Result:
    def __init__(self, code, stdout, stderr):
        self.code, self.stdout, self.stderr = code, stdout, stderr


@contextlib.contextmanager
def logging_as_found():
    """Give the logging set-up back as it was before a shell ran.

    A shell configures logging as its process starts (a console handler
    at the level of --debug or -v). In process, the next shell of the
    test run would inherit it, and with it log and send as under --debug.
    """
    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)]
    saved = [(logger, logger.level, list(logger.handlers), logger.propagate,
              logger.disabled) for logger in loggers]
    levels = {handler: handler.level for logger in loggers
              for handler in logger.handlers}
    try:
        yield
    finally:
        for logger, level, handlers, propagate, disabled in saved:
            logger.setLevel(level)
            logger.handlers[:] = handlers
            logger.propagate = propagate
            logger.disabled = disabled
        for handler, level in levels.items():
            handler.setLevel(level)


def _in_process_app():
    # Imported here so a client-only run (external URL) needs no server.
    from osc_placement.server import app as app_mod
    from osc_placement.server import conf as conf_mod
    from tests.server import fixtures as server_fixtures

    db = server_fixtures.database()
    server_fixtures.reset_database(db)
    root = logging.getLogger()
    handlers = list(root.handlers)
    conf = conf_mod.make_conf(server_fixtures._state['url'],
                              sync_on_startup=False,
                              enforce_new_defaults=False)
    # oslo.log's options come with a root handler at every level; the
    # shell under test would then log (and so send) as under --debug.
    for handler in set(root.handlers) - set(handlers):
        root.removeHandler(handler)
    return app_mod.make_app(conf, db=db)


def _process_url():
    """Start one server process for this test process, on first use."""
    if _process['url'] is None:
        import atexit
        import tempfile
        port = local_server.free_port()
        state = tempfile.mkdtemp(prefix='ocp-functional-')
        connection = _process_database() or (
            'sqlite:///%s/placement.sqlite' % state)
        popen = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server',
             '--database-connection', connection, '--host', '127.0.0.1',
             '--port', str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Registered after the database, so it runs before the drop.
        atexit.register(_stop, popen)
        url = 'http://127.0.0.1:%d' % port
        local_server.wait_until_ready(popen, url, '/', 30)
        _process.update(url=url, popen=popen)
    return _process['url']


def _process_database():
    """A database of this test process's own on the configured server.

    OSC_PLACEMENT_TEST_DB_URL names a database *server*; handing it to the
    server process as is would put every worker in the server's admin
    database, racing each other's migrations. The name is unique and the
    database is dropped at exit, as the in-process mode does.
    """
    server_url = os.environ.get('OSC_PLACEMENT_TEST_DB_URL')
    if not server_url:
        return None
    from tests.server import fixtures as server_fixtures
    url = server_fixtures._create_server_database(server_url)
    return url.render_as_string(hide_password=False)


def _stop(popen):
    popen.terminate()
    try:
        popen.wait(timeout=10)
    except subprocess.TimeoutExpired:
        popen.kill()


def forget_cached_placement_client():
    """openstackclient caches each plugin's client on the ClientManager
    class; a second shell in one process would reuse the first endpoint."""
    cache = clientmanager.ClientManager.__dict__.get('placement')
    if cache is not None:
        cache._handle = None


class PlacementFixture(fixtures.Fixture):
    """A Placement endpoint for one test, in whichever mode is configured."""

    def _setUp(self):
        self.intercept = None  # the in-process server's, for hooks
        external = os.environ.get(URL_ENV)
        if external:
            self.endpoint = external.rstrip('/')
        elif os.environ.get(MODE_ENV) == 'process':
            self.endpoint = _process_url()
        else:
            host = 'placement-%s.test' % uuid.uuid4().hex[:12]
            self.endpoint = 'http://%s' % host
            app = _in_process_app()
            self.intercept = self.useFixture(_Intercept(app, host))


class _Intercept(fixtures.Fixture):
    def __init__(self, app, host):
        self.app, self.host = app, host

    def _setUp(self):
        # requests for the session's path, http.client for the lean GETs
        # (osc_placement.http.LeanGets).
        for kind in (interceptor.RequestsInterceptor,
                     interceptor.HttpClientInterceptor):
            intercept = kind(lambda: self.app, host=self.host, port=80)
            intercept.__enter__()
            self.addCleanup(intercept.__exit__, None, None, None)


class Sent(tuple):
    """One request the client sent: (method, path?query, 'placement X.Y'),
    compared as that triple; the JSON body, if any, is ``body``."""

    def __new__(cls, method, path, microversion, body=None):
        sent = super().__new__(cls, (method, path, microversion))
        sent.body = body
        return sent

    @property
    def request(self):
        """(method, path?query)."""
        return self[:2]

    @property
    def version(self):
        """The microversion alone: 'X.Y'."""
        return self[2].split()[-1]


class FunctionalTestCase(testtools.TestCase):
    """Runs ``openstack`` in-process at ``VERSION`` (None: negotiate)."""

    VERSION = None

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(PlacementFixture())
        # Unique per test: the process and URL modes share one database.
        self.project = str(uuid.uuid4())
        self.user = str(uuid.uuid4())
        for name in ('OS_PLACEMENT_API_VERSION', 'OS_CLOUD', 'OS_AUTH_URL',
                     'OS_AUTH_TYPE', 'OS_TOKEN', 'OS_ENDPOINT'):
            self.useFixture(fixtures.EnvironmentVariable(name))

    def run_openstack(self, argv, version=None):
        """Run the shell; return a Result without judging it."""
        base = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
                '--os-endpoint', self.placement.endpoint]
        chosen = version or self.VERSION
        if chosen:
            base += ['--os-placement-api-version', chosen]
        forget_cached_placement_client()
        out, err = io.StringIO(), io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', out), \
                fixtures.MonkeyPatch('sys.stderr', err), logging_as_found():
            try:
                code = osc_shell.OpenStackShell().run(base + argv)
            except SystemExit as exit_:
                code = exit_.code
        forget_cached_placement_client()
        return Result(code, out.getvalue(), err.getvalue())

    def run_placement(self, argv, version=None):
        """``run_openstack`` through the standalone ``placement`` shell."""
        from osc_placement import shell as placement_shell
        base = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
                '--os-endpoint', self.placement.endpoint]
        chosen = version or self.VERSION
        if chosen:
            base += ['--os-placement-api-version', chosen]
        out, err = io.StringIO(), io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', out), \
                fixtures.MonkeyPatch('sys.stderr', err), logging_as_found():
            try:
                code = placement_shell.PlacementShell().run(base + argv)
            except SystemExit as exit_:
                code = exit_.code
        return Result(code, out.getvalue(), err.getvalue())

    def openstack(self, command, may_fail=False, use_json=False,
                  version=None):
        """Run ``openstack <command>``; parse JSON output when asked.

        Fails the test if the command fails, unless ``may_fail``; then the
        Result is returned so the test can check the text and exit code.
        """
        argv = shlex.split(command) if isinstance(command, str) else command
        if use_json:
            argv = argv + ['-f', 'json']
        result = self.run_openstack(argv, version)
        if may_fail:
            return result
        if result.code != 0:
            raise CommandFailed(argv, result)
        return json.loads(result.stdout) if use_json else result.stdout

    def assertCommandFails(self, command, message, code=1, version=None):
        """The command fails with ``message`` in stderr and exit ``code``."""
        result = self.openstack(command, may_fail=True, version=version)
        self.assertEqual(code, result.code, result.stderr)
        self.assertIn(message, result.stderr)
        return result

    def assertEndsWithRequestId(self, text, status):
        """``text`` (a failed command's stderr) ends with upstream's
        ``(HTTP <status>)`` and the request id."""
        self.assertRegex(text.rstrip(),
                         r'\(HTTP %d\)%s$' % (status, REQUEST_ID))

    @staticmethod
    def unique(prefix):
        return '%s-%s' % (prefix, uuid.uuid4().hex[:8])

    @staticmethod
    def unique_custom(prefix='CUSTOM_FT'):
        return '%s_%s' % (prefix, uuid.uuid4().hex[:8].upper())

    # --- Set-up and inspection helpers.
    #
    # Set-up (providers, inventories, classes, traits, aggregates,
    # allocations) goes over plain HTTP at SETUP_VERSION, whatever the
    # test's VERSION: it is not what these tests test, and a shell run
    # costs ~0.1 s against a few ms for a request. wsgi-intercept
    # intercepts these requests in-process too.

    def http(self, method, path, body=None, version=SETUP_VERSION,
             expect=None):
        """Send one raw request to the server; check the status if asked."""
        headers = {'X-Auth-Token': 'admin', 'Accept': 'application/json',
                   'OpenStack-API-Version': 'placement %s' % version}
        response = requests.request(method, self.placement.endpoint + path,
                                    json=body, headers=headers, timeout=60)
        if expect is not None:
            self.assertEqual(expect, response.status_code,
                             '%s %s: %s' % (method, path, response.text))
        return response

    def provider_generation(self, rp_uuid):
        return self.http('GET', '/resource_providers/%s' % rp_uuid,
                         expect=200).json()['generation']

    def create_provider(self, name=None, parent=None, version=SETUP_VERSION):
        """A provider named ``name`` (unique if not given), as a dict.

        ``version`` is for tests that make the server refuse newer ones;
        it must be 1.20 or newer, where the answer has a body.
        """
        body = {'name': name or self.unique('rp')}
        if parent:
            body['parent_provider_uuid'] = parent
        return self.http('POST', '/resource_providers', body,
                         version=version, expect=200).json()

    def set_inventory(self, rp_uuid, inventories):
        """``inventories``: {class: total, or {field: value}}."""
        records = {rc: fields if isinstance(fields, dict)
                   else {'total': fields}
                   for rc, fields in inventories.items()}
        self.http('PUT', '/resource_providers/%s/inventories' % rp_uuid,
                  {'inventories': records,
                   'resource_provider_generation':
                       self.provider_generation(rp_uuid)}, expect=200)

    def compute_node(self, vcpu=8, memory=4096, prefix='cn'):
        """A root provider with VCPU and MEMORY_MB inventory; its uuid."""
        rp = self.create_provider(self.unique(prefix))['uuid']
        self.set_inventory(rp, {'VCPU': vcpu, 'MEMORY_MB': memory})
        return rp

    def create_trait(self, name=None):
        """A custom trait named ``name`` (unique if not given)."""
        name = name or self.unique_custom()
        self.http('PUT', '/traits/%s' % name)
        return name

    def set_provider_traits(self, rp_uuid, traits):
        """Replace the provider's traits; missing custom ones are created."""
        for name in traits:
            if name.startswith('CUSTOM_'):
                self.create_trait(name)
        body = {'traits': list(traits),
                'resource_provider_generation':
                    self.provider_generation(rp_uuid)}
        self.http('PUT', '/resource_providers/%s/traits' % rp_uuid, body,
                  expect=200)

    def set_provider_aggregates(self, rp_uuid, aggregates):
        body = {'aggregates': list(aggregates),
                'resource_provider_generation':
                    self.provider_generation(rp_uuid)}
        self.http('PUT', '/resource_providers/%s/aggregates' % rp_uuid,
                  body, expect=200)

    def create_resource_class(self, name=None):
        """A custom resource class named ``name`` (unique if not given)."""
        name = name or self.unique_custom()
        self.http('PUT', '/resource_classes/%s' % name)
        return name

    def allocate(self, consumer, allocations, project=None, user=None,
                 consumer_type=None):
        """Write ``{rp_uuid: {RC: amount}}`` for ``consumer``.

        Through ``PUT /allocations/{consumer}`` when the server has the
        route. A server built without allocations yet gets the rows
        written straight into its database (in-process mode only; the
        other modes skip the test).
        """
        project = project or str(uuid.uuid4())
        user = user or str(uuid.uuid4())
        version = '1.38' if consumer_type else '1.28'
        body = {'allocations': {rp: {'resources': resources}
                                for rp, resources in allocations.items()},
                'project_id': project, 'user_id': user,
                'consumer_generation': None}
        if consumer_type:
            body['consumer_type'] = consumer_type
        response = self.http('PUT', '/allocations/%s' % consumer, body,
                             version=version)
        if response.status_code == 204:
            return
        if response.status_code != 404 or (
                _in_process() and _server_routes_allocations()):
            self.fail('PUT /allocations/%s: %s %s' % (
                consumer, response.status_code, response.text))
        if not _in_process():
            self.skipTest('the server has no allocations route')
        _write_allocations(consumer, allocations, project, user,
                           consumer_type)

    def show_allocations(self, consumer, version=SETUP_VERSION):
        """``allocation show`` rows of ``consumer``, through the shell."""
        return self.openstack(
            ['resource', 'provider', 'allocation', 'show', consumer],
            use_json=True, version=version)

    def provider_usages(self, rp_uuid):
        """{class: usage} of a provider, through the shell."""
        rows = self.openstack(
            ['resource', 'provider', 'usage', 'show', rp_uuid],
            use_json=True, version=SETUP_VERSION)
        return {row['resource_class']: row['usage'] for row in rows}

    def hook_server(self, hook):
        """Put ``hook(environ)`` in front of the in-process server.

        It sees every request first; when it returns ``(status, headers,
        body)`` that is the answer and the server never sees the request
        (a failing proxy, an overloaded worker). The other modes skip.
        """
        intercept = self.placement.intercept
        if intercept is None:
            self.skipTest('needs the in-process server')
        app = intercept.app

        def hooked(environ, start_response):
            answer = hook(environ)
            if answer is None:
                return app(environ, start_response)
            status, headers, body = answer
            start_response(status, headers)
            return [body]

        intercept.app = hooked
        self.addCleanup(setattr, intercept, 'app', app)

    def pretend_server_max(self, max_version):
        """Make the in-process server answer like one whose highest
        microversion is ``max_version``: 406 above it, as Placement does."""
        limit = tuple(int(part) for part in max_version.split('.'))

        def hook(environ):
            header = environ.get('HTTP_OPENSTACK_API_VERSION', '')
            asked = header.replace('placement', '').strip()
            if not asked or tuple(
                    int(part) for part in asked.split('.')) <= limit:
                return None
            error = {'status': 406, 'title': 'Not Acceptable',
                     'detail': 'Unacceptable version header: %s' % asked,
                     'max_version': max_version, 'min_version': '1.0'}
            return ('406 Not Acceptable',
                    [('Content-Type', 'application/json')],
                    json.dumps({'errors': [error]}).encode())

        self.hook_server(hook)

    def record_requests(self):
        """Record every request the client sends from now on, as
        ``Sent`` tuples: (method, path?query, 'placement X.Y')."""
        from keystoneauth1 import session as ks_session
        calls = []
        original = ks_session.Session.request

        def request(session, url, method, *args, **kwargs):
            headers = kwargs.get('headers') or {}
            params = kwargs.get('params')
            query = '?' + urllib.parse.urlencode(params, doseq=True) \
                if params else ''
            calls.append(Sent(method, url + query,
                              headers.get('OpenStack-API-Version', ''),
                              kwargs.get('json')))
            return original(session, url, method, *args, **kwargs)

        def lean_get(lean, url, params, headers):
            response = original_lean(lean, url, params, headers)
            if response is not None:
                query = '?' + urllib.parse.urlencode(params, doseq=True) \
                    if params else ''
                calls.append(Sent('GET', url + query,
                                  headers.get('OpenStack-API-Version', '')))
            return response

        original_lean = client_http.LeanGets.get
        self.useFixture(fixtures.MonkeyPatch(
            'keystoneauth1.session.Session.request', request))
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.http.LeanGets.get', lean_get))
        return calls

    @contextlib.contextmanager
    def meanwhile(self, method, path, action):
        """Run ``action(send)`` right after the client's first ``method path``.

        This is how a concurrent writer is simulated: the client has read
        (say, the consumer generation) and is about to write. ``send(method,
        url, **kwargs)`` sends a request through the client's own session
        (``version=`` picks the microversion), so the concurrent change
        goes through the same server, whatever the mode.
        """
        original = client_http.SessionClient.request
        state = {'done': False}

        def request(client, req_method, url, **kwargs):
            response = original(client, req_method, url, **kwargs)
            if (not state['done'] and req_method == method
                    and url.split('?')[0] == path):
                state['done'] = True
                action(lambda *a, **kw: original(client, *a, **kw))
            return response

        with fixtures.MonkeyPatch(
                'osc_placement.http.SessionClient.request', request):
            yield state
        self.assertTrue(state['done'], '%s %s was never sent'
                        % (method, path))


def _in_process():
    return not os.environ.get(URL_ENV) and \
        os.environ.get(MODE_ENV) != 'process'


def _server_routes_allocations():
    from osc_placement.server import routes
    return any(path == '/allocations/{consumer_uuid}'
               for path, _ in routes.ROUTES)


def _write_allocations(consumer, allocations, project, user, consumer_type):
    """Allocation rows written the way the server would write them: a
    consumer (with project, user, type) and one row per class, each
    provider's generation bumped in the same transaction."""
    import sqlalchemy as sa

    from osc_placement.server.db import tables
    from tests.server import fixtures as server_fixtures

    def id_of(conn, table, column, value, create=True):
        found = conn.execute(sa.select(table.c.id).where(
            table.c[column] == value)).scalar()
        if found is None and create:
            found = conn.execute(table.insert().values(
                **{column: value})).inserted_primary_key[0]
        return found

    db = server_fixtures.database()
    rp = tables.resource_providers
    with db.write() as conn:
        type_id = consumer_type and id_of(conn, tables.consumer_types,
                                          'name', consumer_type)
        conn.execute(tables.consumers.insert().values(
            uuid=consumer, generation=1, consumer_type_id=type_id,
            project_id=id_of(conn, tables.projects, 'external_id', project),
            user_id=id_of(conn, tables.users, 'external_id', user)))
        for rp_uuid, resources in allocations.items():
            rp_id = id_of(conn, rp, 'uuid', rp_uuid, create=False)
            conn.execute(tables.allocations.insert(), [
                {'resource_provider_id': rp_id, 'consumer_id': consumer,
                 'used': used, 'resource_class_id': id_of(
                     conn, tables.resource_classes, 'name', name,
                     create=False)}
                for name, used in resources.items()])
            conn.execute(rp.update().where(rp.c.id == rp_id).values(
                generation=rp.c.generation + 1))
