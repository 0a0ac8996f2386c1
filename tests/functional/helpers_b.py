"""Helpers for the allocation, candidate, trait and scenario tests.

A mixin for ``base.FunctionalTestCase``. Set-up commands run at an explicit
modern version so that a test class pinned to an old ``VERSION`` can still
build its providers; only the command under test runs at ``VERSION``.
"""

import contextlib
import json
import os
import urllib.parse
import uuid

import fixtures
import requests

from osc_placement import http
from tests.functional import base

# Set-up commands (providers, inventories, traits, aggregates) run here.
SETUP_VERSION = '1.39'

GATE = ('Operation or argument is not supported with version %s; '
        'requires at least version %s')


def gate_error(ver, first):
    return GATE % (ver, first)


def at_least(ver, first):
    """True when ``ver`` (an 'X.Y' string) is ``first`` or newer."""
    def parts(text):
        return tuple(int(p) for p in text.split('.'))
    return parts(ver) >= parts(first)


class HelpersB:
    """Set-up and inspection helpers; needs ``FunctionalTestCase``."""

    def setUp(self):
        super().setUp()
        # Unique per test: other modes share one database between tests.
        self.project = str(uuid.uuid4())
        self.user = str(uuid.uuid4())

    # --- set-up over plain HTTP, at SETUP_VERSION
    #
    # Set-up is not what these tests test, and a shell run costs ~0.1 s
    # against a few ms for a request; the scenarios build their world
    # through the client instead.

    def api(self, method, path, body=None, version=SETUP_VERSION,
            expect=(200, 201, 204)):
        response = requests.request(
            method, self.placement.endpoint + path, json=body, timeout=30,
            headers={'X-Auth-Token': 'admin', 'Accept': 'application/json',
                     'OpenStack-API-Version': 'placement %s' % version})
        self.assertIn(response.status_code, expect,
                      '%s %s: %s' % (method, path, response.text))
        return response.json() if response.content else None

    def new_provider(self, prefix='rp', parent=None):
        body = {'name': self.unique(prefix)}
        if parent:
            body['parent_provider_uuid'] = parent
        return self.api('POST', '/resource_providers', body)

    def set_inventory(self, rp, *resources):
        """``RC=total`` strings, as the CLI's bare ``--resource``."""
        inventories = {}
        for resource in resources:
            rc, total = resource.split('=')
            inventories[rc] = {'total': int(total)}
        generation = self.show_provider(rp)['generation']
        return self.api('PUT', '/resource_providers/%s/inventories' % rp,
                        {'inventories': inventories,
                         'resource_provider_generation': generation})

    def new_resource_class(self, prefix='CUSTOM_FTB'):
        name = self.unique_custom(prefix)
        self.api('PUT', '/resource_classes/' + name)
        return name

    def new_trait(self, prefix='CUSTOM_FT'):
        name = self.unique_custom(prefix)
        self.api('PUT', '/traits/' + name)
        return name

    def set_traits(self, rp, *traits):
        generation = self.show_provider(rp)['generation']
        return self.api('PUT', '/resource_providers/%s/traits' % rp,
                        {'traits': list(traits),
                         'resource_provider_generation': generation})

    def set_aggregates(self, rp, *aggregates):
        generation = self.show_provider(rp)['generation']
        return self.api('PUT', '/resource_providers/%s/aggregates' % rp,
                        {'aggregates': list(aggregates),
                         'resource_provider_generation': generation})

    def show_provider(self, rp):
        return self.api('GET', '/resource_providers/' + rp)

    def compute_node(self, vcpu=8, memory=4096, prefix='cn'):
        """A root provider with VCPU and MEMORY_MB inventory."""
        rp = self.new_provider(prefix)
        self.set_inventory(rp['uuid'], 'VCPU=%d' % vcpu,
                           'MEMORY_MB=%d' % memory)
        return rp['uuid']

    def allocate_cli(self, consumer, *allocations, **kwargs):
        """``allocation set`` at SETUP_VERSION unless ``version`` given."""
        ver = kwargs.get('version', SETUP_VERSION)
        cmd = ['resource', 'provider', 'allocation', 'set', consumer]
        for alloc in allocations:
            cmd += ['--allocation', alloc]
        if at_least(ver, '1.8'):
            cmd += ['--project-id', kwargs.get('project', self.project),
                    '--user-id', kwargs.get('user', self.user)]
        if at_least(ver, '1.38'):
            cmd += ['--consumer-type', kwargs.get('consumer_type',
                                                  'INSTANCE')]
        return self.openstack(cmd, use_json=True, version=ver)

    def show_allocations(self, consumer, version=SETUP_VERSION):
        return self.openstack(
            ['resource', 'provider', 'allocation', 'show', consumer],
            use_json=True, version=version)

    def provider_usages(self, rp):
        rows = self.openstack(['resource', 'provider', 'usage', 'show', rp],
                              use_json=True, version=SETUP_VERSION)
        return {row['resource_class']: row['usage'] for row in rows}

    def pretend_older_server(self, max_version):
        """Make the in-process server answer like one whose highest
        microversion is ``max_version``: 406 with ``max_version`` above
        it, as Placement does. The other modes skip the test."""
        if os.environ.get(base.URL_ENV) or \
                os.environ.get(base.MODE_ENV) == 'process':
            self.skipTest('needs the in-process server')
        import wsgi_intercept
        key = (urllib.parse.urlsplit(self.placement.endpoint).hostname, 80)
        create, script_name = wsgi_intercept._wsgi_intercept[key]
        limit = tuple(int(part) for part in max_version.split('.'))

        def older(environ, start_response):
            asked = environ.get('HTTP_OPENSTACK_API_VERSION', '')
            asked = asked.replace('placement', '').strip()
            if asked and asked != 'latest' and tuple(
                    int(part) for part in asked.split('.')) > limit:
                error = {'status': 406, 'title': 'Not Acceptable',
                         'detail': 'Unacceptable version header: %s'
                                   % asked,
                         'max_version': max_version, 'min_version': '1.0'}
                start_response('406 Not Acceptable',
                               [('Content-Type', 'application/json')])
                return [json.dumps({'errors': [error]}).encode()]
            return create()(environ, start_response)

        wsgi_intercept._wsgi_intercept[key] = (lambda: older, script_name)
        self.addCleanup(wsgi_intercept._wsgi_intercept.__setitem__, key,
                        (create, script_name))

    # --- inspection

    def debug_versions(self, stderr):
        """The microversions sent, from ``--debug`` output, in order."""
        marker = 'OpenStack-API-Version: placement '
        found = []
        for line in stderr.splitlines():
            if line.startswith('REQ: ') and marker in line:
                found.append(line.split(marker, 1)[1].split('"')[0])
        return found

    def debug_requests(self, stderr):
        """``(method, path)`` of the requests sent, from ``--debug``."""
        found = []
        for line in stderr.splitlines():
            if not line.startswith('REQ: curl'):
                continue
            words = line.split()
            method = words[words.index('-X') + 1]
            url = words[words.index('-X') + 2].strip('"\'')
            path = '/' + url.split('//', 1)[1].split('/', 1)[1]
            found.append((method, path))
        return found

    def debug_bodies(self, stderr):
        """``(method, path, JSON body)`` of the requests that had one."""
        found = []
        requests_ = [line for line in stderr.splitlines()
                     if line.startswith('REQ: curl')]
        for line, (method, path) in zip(requests_,
                                        self.debug_requests(stderr)):
            if " -d '" in line:
                body = line.split(" -d '", 1)[1].rstrip("'")
                found.append((method, path, json.loads(body)))
        return found

    @contextlib.contextmanager
    def meanwhile(self, method, path, action):
        """Run ``action(send)`` right after the client's first ``method path``.

        This is how a concurrent writer is simulated: the client has read
        (say, the consumer generation) and is about to write. ``send(method,
        url, **kwargs)`` sends a request through the client's own session
        (``version=`` picks the microversion), so the concurrent change
        goes through the same server, whatever the mode.
        """
        original = http.SessionClient.request
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
