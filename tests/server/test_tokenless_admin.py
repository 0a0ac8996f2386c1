# SPDX-License-Identifier: Apache-2.0
"""``[api] noauth_admin_without_token``: noauth2 serving requests that send
no token as the administrator, for neutron-lib's ``NoAuthClient``.

In process for the rules; then a real ``placement-server`` process driven
with the HTTP requests NoAuthClient sends (neutron-lib 5.0.1: a JSON body
on every method, ``null`` when there is nothing to send, no Content-Type,
no token), which a server without the option refuses; then the
PlacementFixture.

The tests driving ``PlacementAPIClient`` itself need neutron-lib, which
is not a test requirement: installed in the project's virtualenv, its
flake8 plugin (N5xx checks) needs ``hacking`` and stops flake8 from
starting. ``tools/run-tests.sh server`` installs it beside the virtualenv
(``.neutron-lib``); to run this module alone::

    pip install --no-deps --target .neutron-lib neutron-lib==5.0.1 \\
        oslo.db pecan
    PYTHONPATH=.:.neutron-lib python -m testtools.run \\
        tests.server.test_tokenless_admin
"""

import io
import json
import os
import subprocess
import sys
import uuid

import fixtures
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
import requests
import testtools
import webob

from benchmarks import local_server
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server import fixture as placement_fixture
from tests.server.test_fixture import _RestorePolicyDefault

try:
    from neutron_lib.placement import client as neutron_placement
except ImportError:  # beside the virtualenv: see the module's docstring
    neutron_placement = None


def needs_neutron_lib(test):
    """A missing peer fails the test: it must never pass as a skip."""
    def run(self, *args, **kwargs):
        if neutron_placement is None:
            self.fail('neutron-lib is not importable: see this module\'s '
                      'docstring (tools/run-tests.sh installs it)')
        return test(self, *args, **kwargs)
    run.__name__ = test.__name__
    return run


BANDWIDTH = 'NET_BW_EGR_KILOBIT_PER_SEC'
PHYSNET_TRAIT = 'CUSTOM_PHYSNET_PUBLIC'
READY_SECONDS = 60


def _app(admin_without_token):
    conf = conf_mod.make_conf('sqlite://', enforce_new_defaults=False)
    conf.set_override('noauth_admin_without_token', admin_without_token,
                      'api')
    return app_mod.make_app(conf)


def _call(app, method, path, body=None, headers=None):
    """A request as NoAuthClient sends it unless ``headers`` say more: a
    JSON body, no Content-Type."""
    req = webob.Request.blank(path, method=method, headers=headers or {})
    if body is not None:
        req.environ['CONTENT_LENGTH'] = str(len(body))
        req.environ['wsgi.input'] = io.BytesIO(body)
    return req.get_response(app)


class TestInProcess(testtools.TestCase):

    def test_off_by_default(self):
        conf = conf_mod.make_conf('sqlite://')
        self.assertFalse(conf.api.noauth_admin_without_token)
        resp = _call(app_mod.make_app(conf), 'GET', '/resource_providers')
        self.assertEqual(401, resp.status_int)

    def test_a_request_without_a_token_is_the_admin(self):
        app = _app(True)
        created = _call(app, 'POST', '/resource_providers',
                        b'{"name": "no token"}',
                        {'OpenStack-API-Version': 'placement 1.37'})
        self.assertEqual(200, created.status_int, created.text)
        listed = _call(app, 'GET', '/resource_providers', b'null')
        self.assertEqual(200, listed.status_int, listed.text)
        self.assertEqual(['no token'], [
            p['name'] for p in listed.json['resource_providers']])

    def test_requests_with_a_token_keep_noauth2s_meaning(self):
        app = _app(True)
        resp = _call(app, 'GET', '/resource_providers',
                     headers={'X-Auth-Token': 'alice'})
        self.assertEqual(403, resp.status_int)
        # A token's request needs its Content-Type, as upstream's does.
        resp = _call(app, 'POST', '/resource_providers', b'{"name": "x"}',
                     {'X-Auth-Token': 'admin'})
        self.assertEqual(400, resp.status_int)
        # X-Roles still overrides, token or not.
        resp = _call(app, 'GET', '/resource_providers',
                     headers={'X-Roles': 'reader'})
        self.assertEqual(403, resp.status_int)

    def test_a_stated_content_type_is_kept(self):
        resp = _call(_app(True), 'POST', '/resource_providers',
                     b'{"name": "x"}', {'Content-Type': 'text/plain'})
        self.assertEqual(415, resp.status_int)


class BareClient:
    """The requests neutron-lib's NoAuthClient makes, written out: each
    body JSON-encoded by the client (``null`` for none) and sent as
    ``data`` so that requests adds no Content-Type; Accept and the
    microversion PlacementAPIClient asks for; no token."""

    HEADERS = {'Accept': 'application/json',
               'OpenStack-API-Version': 'placement 1.37'}

    def __init__(self, url):
        self.url = url

    def __call__(self, method, path, body=None):
        resp = requests.request(method, self.url + path,
                                data=json.dumps(body), headers=self.HEADERS,
                                timeout=10)
        assert 'Content-Type' not in resp.request.headers
        return resp

    def ok(self, method, path, body=None):
        resp = self(method, path, body)
        if resp.status_code >= 300:
            raise AssertionError('%s %s: %s %s' % (
                method, path, resp.status_code, resp.text))
        return resp.json() if resp.content else None

    def generation(self, provider):
        return self.ok('GET', '/resource_providers/' + provider)['generation']


def drive_bare(test, url):
    """Neutron's calls, as NoAuthClient sends them: a provider tree, its
    rename, bandwidth inventories, a custom trait, an allocation and its
    QoS-like update (read, add, write back)."""
    bare = BareClient(url)
    agent, bridge = str(uuid.uuid4()), str(uuid.uuid4())
    bare.ok('POST', '/resource_providers', {'uuid': agent, 'name': 'agent'})
    bare.ok('POST', '/resource_providers', {
        'uuid': bridge, 'name': 'br-ex', 'parent_provider_uuid': agent})
    bare.ok('PUT', '/resource_providers/' + bridge,
            {'name': 'br-public', 'parent_provider_uuid': agent})
    bare.ok('PUT', '/resource_providers/%s/inventories' % bridge, {
        'inventories': {BANDWIDTH: {'total': 10000, 'reserved': 0}},
        'resource_provider_generation': bare.generation(bridge)})
    bare.ok('PUT', '/traits/' + PHYSNET_TRAIT)
    bare.ok('PUT', '/resource_providers/%s/traits' % bridge, {
        'traits': [PHYSNET_TRAIT],
        'resource_provider_generation': bare.generation(bridge)})
    consumer = '/allocations/' + str(uuid.uuid4())
    bare.ok('PUT', consumer, {
        'allocations': {bridge: {'resources': {BANDWIDTH: 1000}}},
        'consumer_generation': None, 'project_id': str(uuid.uuid4()),
        'user_id': str(uuid.uuid4())})
    current = bare.ok('GET', consumer)
    current['allocations'][bridge]['resources'][BANDWIDTH] += 500
    bare.ok('PUT', consumer, current)
    test.assertEqual({BANDWIDTH: 1500}, bare.ok('GET', consumer)[
        'allocations'][bridge]['resources'])
    test.assertEqual([PHYSNET_TRAIT], bare.ok(
        'GET', '/resource_providers/%s/traits' % bridge)['traits'])
    bare.ok('DELETE', consumer)
    return bare


def _neutron_conf(url):
    """neutron's ``[placement]`` options as neutron registers them, set
    as its fullstack tests set them for NoAuthClient (auth_type noauth,
    the endpoint in auth_section)."""
    conf = cfg.ConfigOpts()
    ks_loading.register_auth_conf_options(conf, 'placement')
    conf.register_opts([cfg.StrOpt('region_name'),
                        cfg.StrOpt('endpoint_type', default='public')],
                       group='placement')
    conf([], default_config_files=[])
    conf.set_override('auth_type', 'noauth', 'placement')
    conf.set_override('auth_section', url, 'placement')
    return conf


def drive_as_neutron(test, url):
    """What neutron's placement report and QoS code ask of Placement,
    through PlacementAPIClient with NoAuthClient: a provider tree with
    bandwidth inventories and a physnet trait, an allocation, and its
    QoS update."""
    client = neutron_placement.PlacementAPIClient(_neutron_conf(url))
    agent = {'uuid': str(uuid.uuid4()), 'name': 'host1:Open vSwitch agent'}
    bridge = {'uuid': str(uuid.uuid4()), 'name': 'host1:ovs:br-ex',
              'parent_provider_uuid': agent['uuid']}
    test.assertEqual(agent['uuid'],
                     client.create_resource_provider(agent)['uuid'])
    client.create_resource_provider(bridge)
    renamed = dict(bridge, name='host1:ovs:br-public')
    test.assertEqual('host1:ovs:br-public',
                     client.ensure_resource_provider(renamed)['name'])
    client.update_resource_provider_inventories(
        bridge['uuid'], {BANDWIDTH: {'total': 10000, 'reserved': 0}})
    client.update_trait(PHYSNET_TRAIT)
    client.update_resource_provider_traits(bridge['uuid'], [PHYSNET_TRAIT])
    test.assertEqual([PHYSNET_TRAIT], client.list_resource_provider_traits(
        bridge['uuid'])['traits'])
    consumer = str(uuid.uuid4())
    client.update_allocation(consumer, {
        'allocations': {bridge['uuid']: {'resources': {BANDWIDTH: 1000}}},
        'consumer_generation': None, 'project_id': str(uuid.uuid4()),
        'user_id': str(uuid.uuid4())})
    client.update_qos_allocation(consumer, {bridge['uuid']: {BANDWIDTH: 500}})
    allocations = client.list_allocations(consumer)['allocations']
    test.assertEqual({BANDWIDTH: 1500},
                     allocations[bridge['uuid']]['resources'])
    test.assertEqual(
        ['host1:Open vSwitch agent', 'host1:ovs:br-public'], sorted(
            p['name'] for p in client.list_resource_providers(
                in_tree=agent['uuid'])['resource_providers']))
    return client


class TestServerProcess(testtools.TestCase):
    """A real ``python -m osc_placement.server`` on loopback."""

    def _start(self, *flags):
        tmp = self.useFixture(fixtures.TempDir()).path
        conf = os.path.join(tmp, 'placement.conf')
        with open(conf, 'w') as f:
            f.write('[api]\nauth_strategy = noauth2\n'
                    '[placement_database]\nconnection = sqlite:///%s/p.db\n'
                    'sync_on_startup = true\n' % tmp)
        port = local_server.free_port()
        proc = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server', '--config-file',
             conf, '--host', '127.0.0.1', '--port', str(port)] + list(flags),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR=tmp))
        self.addCleanup(self._kill, proc)
        url = 'http://127.0.0.1:%d' % port
        local_server.wait_until_ready(proc, url, '/', READY_SECONDS)
        return url

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def test_noauth_client_requests_served_in_the_mode(self):
        drive_bare(self, self._start('--noauth-admin-without-token'))

    def test_noauth_client_requests_refused_without_it(self):
        bare = BareClient(self._start())
        for method, path in (('GET', '/resource_providers'),
                             ('PUT', '/traits/' + PHYSNET_TRAIT)):
            self.assertEqual(401, bare(method, path).status_code)

    @needs_neutron_lib
    def test_neutron_lib_placement_client(self):
        url = self._start('--noauth-admin-without-token')
        drive_as_neutron(self, url)
        refusing = self._start()
        client = neutron_placement.PlacementAPIClient(
            _neutron_conf(refusing))
        # NoAuthClient hands back any answer; this one is upstream's 401.
        self.assertEqual('401 Unauthorized',
                         client.list_resource_providers()['code'])


class TestFixture(testtools.TestCase):

    def _placement(self, **kwargs):
        self.useFixture(_RestorePolicyDefault())
        return self.useFixture(placement_fixture.PlacementFixture(**kwargs))

    def test_noauth_client_requests_through_the_fixture(self):
        drive_bare(self, self._placement(admin_without_token=True).endpoint)

    def test_fixture_refuses_tokenless_requests_by_default(self):
        resp = BareClient(self._placement().endpoint)(
            'GET', '/resource_providers')
        self.assertEqual(401, resp.status_code)

    @needs_neutron_lib
    def test_neutron_lib_placement_client_through_the_fixture(self):
        drive_as_neutron(
            self, self._placement(admin_without_token=True).endpoint)
