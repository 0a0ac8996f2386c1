"""Helpers for the allocation, candidate, trait and scenario tests.

A mixin for ``base.FunctionalTestCase``. Set-up commands run at an explicit
modern version so that a test class pinned to an old ``VERSION`` can still
build its providers; only the command under test runs at ``VERSION``.
"""

import contextlib
import uuid

import fixtures

from osc_placement import http

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

    # --- set-up through the client, at SETUP_VERSION

    def create_provider(self, prefix='rp', parent=None):
        cmd = ['resource', 'provider', 'create', self.unique(prefix)]
        if parent:
            cmd += ['--parent-provider', parent]
        return self.openstack(cmd, use_json=True, version=SETUP_VERSION)

    def set_inventory(self, rp, *resources):
        cmd = ['resource', 'provider', 'inventory', 'set', rp]
        for resource in resources:
            cmd += ['--resource', resource]
        return self.openstack(cmd, use_json=True, version=SETUP_VERSION)

    def create_trait(self, prefix='CUSTOM_FT'):
        name = self.unique_custom(prefix)
        self.openstack(['trait', 'create', name], version=SETUP_VERSION)
        return name

    def set_traits(self, rp, *traits):
        cmd = ['resource', 'provider', 'trait', 'set', rp]
        for trait in traits:
            cmd += ['--trait', trait]
        return self.openstack(cmd, use_json=True, version=SETUP_VERSION)

    def set_aggregates(self, rp, *aggregates):
        generation = self.show_provider(rp)['generation']
        cmd = ['resource', 'provider', 'aggregate', 'set', rp,
               '--generation', str(generation)]
        for aggregate in aggregates:
            cmd += ['--aggregate', aggregate]
        return self.openstack(cmd, use_json=True, version=SETUP_VERSION)

    def show_provider(self, rp):
        return self.openstack(['resource', 'provider', 'show', rp],
                              use_json=True, version=SETUP_VERSION)

    def compute_node(self, vcpu=8, memory=4096, prefix='cn'):
        """A root provider with VCPU and MEMORY_MB inventory."""
        rp = self.create_provider(prefix)
        self.set_inventory(rp['uuid'], 'VCPU=%d' % vcpu,
                           'MEMORY_MB=%d' % memory)
        return rp['uuid']

    def allocate(self, consumer, *allocations, **kwargs):
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
            url = words[words.index('-X') + 2]
            path = '/' + url.split('//', 1)[1].split('/', 1)[1]
            found.append((method, path))
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
