# SPDX-License-Identifier: Apache-2.0
"""Answers whose exact text is the point, from upstream 16.0.0 and ours
on one database: the order of the classes in allocation candidates, the
403 of a refused policy, the 400 that prints the schema a body broke.

JSON bodies are compared as documents in their keys' order (ours is
compact, upstream's spaced: see doc/source/server/upstream-parity.rst),
without their request ids; other bodies byte for byte.
"""

import json
import urllib.error
import urllib.request

from tests.compat import populate
from tests.compat import upstream

COMPUTE = populate.uid('texts-compute')
UNKNOWN = populate.uid('texts-unknown')

# (method, path, body, headers, microversion): answers that are errors.
_SYSTEM = {'OpenStack-System-Scope': 'all'}
_SERVICE = {'X-Roles': 'admin,service'}
_READER = {'X-Auth-Token': 'reader:its-project', 'X-Roles': 'reader'}
ERRORS = [
    ('GET', '/resource_providers', None, _SYSTEM, '1.39'),
    ('GET', '/resource_providers', None, _READER, '1.39'),
    # No Accept check on these routes: WebOb's HTML page and plain text.
    ('DELETE', '/resource_providers/' + COMPUTE, None,
     dict(_SYSTEM, Accept='text/html'), '1.39'),
    ('DELETE', '/resource_providers/' + COMPUTE, None,
     dict(_SYSTEM, Accept='text/plain'), '1.39'),
    ('DELETE', '/resource_providers/' + COMPUTE, None,
     dict(_READER, Accept='text/html'), '1.39'),
    ('POST', '/reshaper', {'inventories': {}, 'allocations': {}}, _SERVICE,
     '1.30'),
    ('POST', '/reshaper', {'inventories': {}, 'allocations': {}}, _SERVICE,
     '1.34'),
    ('POST', '/reshaper', {'inventories': {}, 'allocations': {}}, _SERVICE,
     '1.38'),
    ('POST', '/reshaper', {'inventories': {COMPUTE: {
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 0}}}}, 'allocations': {}},
     _SERVICE, '1.38'),
    ('POST', '/resource_providers', {'nam': 1}, {}, '1.39'),
    ('PUT', '/allocations/' + UNKNOWN, {'allocations': {}}, {}, '1.39'),
    ('PUT', '/allocations/' + UNKNOWN, {'allocations': []}, {}, '1.0'),
    ('PUT', '/allocations/' + UNKNOWN, {'allocations': [
        {'resource_provider': {'uuid': COMPUTE, 'x': 1},
         'resources': {'VCPU': 1}}]}, {}, '1.8'),
    ('PUT', '/allocations/' + UNKNOWN, {'allocations': {}}, {}, '1.12'),
    ('PUT', '/allocations/' + UNKNOWN, {'allocations': {},
                                        'project_id': 'p', 'user_id': 'u',
                                        'consumer_generation': None,
                                        'bogus': 1}, {}, '1.28'),
    ('POST', '/allocations', {}, {}, '1.13'),
    ('POST', '/allocations', {UNKNOWN: {'allocations': {}}}, {}, '1.28'),
    ('POST', '/allocations', {UNKNOWN: {'allocations': {}}}, {}, '1.38'),
    ('POST', '/resource_providers/%s/inventories' % COMPUTE,
     {'total': 1}, {}, '1.39'),
    ('PUT', '/resource_providers/%s/inventories' % COMPUTE,
     {'inventories': {}}, {}, '1.39'),
    ('PUT', '/resource_providers/%s/inventories/VCPU' % COMPUTE,
     {'total': 0}, {}, '1.39'),
    ('PUT', '/resource_providers/%s/aggregates' % COMPUTE, ['x'], {},
     '1.1'),
    ('PUT', '/resource_providers/%s/aggregates' % COMPUTE,
     {'aggregates': ['x', 'x']}, {}, '1.19'),
    ('GET', '/usages?project_id=p&consumer_type=lower', None, {}, '1.38'),
]

# Candidate queries of one host (one candidate each, so that the answer
# is deterministic upstream too), its classes named in another order
# than their names'.
CANDIDATE_QUERIES = [
    ('resources=MEMORY_MB:512,VCPU:2,DISK_GB:10', '1.10'),
    ('resources=MEMORY_MB:512,VCPU:2,DISK_GB:10', '1.12'),
    ('resources=VCPU:2,DISK_GB:10,MEMORY_MB:512', '1.26'),
    ('resources=DISK_GB:10,MEMORY_MB:512,VCPU:2', '1.39'),
    ('resources1=VCPU:2,MEMORY_MB:512&resources=DISK_GB:10'
     '&group_policy=none', '1.39'),
    ('resources=DISK_GB:10&resources2=VCPU:2&resources1=MEMORY_MB:512'
     '&group_policy=none', '1.39'),
    ('resources=VCPU:1,MEMORY_MB:1&resources1=MEMORY_MB:1,VCPU:1'
     '&group_policy=none', '1.39'),
]


def _request(base, method, path, body, headers, version):
    """(status, content type, body bytes)."""
    sent = {'X-Auth-Token': 'admin', 'Accept': 'application/json',
            'OpenStack-API-Version': 'placement %s' % version}
    sent.update(headers)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent['Content-Type'] = 'application/json'
    req = urllib.request.Request(base + path, data=data, headers=sent,
                                 method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.headers['Content-Type'], resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers['Content-Type'], exc.read()


def _comparable(answer):
    """An answer with its request id left out, JSON as a document."""
    status, content_type, raw = answer
    if content_type != 'application/json':
        return status, content_type, raw
    document = json.loads(raw)
    for error in document.get('errors', ()):
        error.pop('request_id', None)
    # In the keys' order, which a dict comparison would not see.
    return status, content_type, json.dumps(document)


class _OneHost(upstream.BothSidesTestCase):

    def setUp(self):
        super().setUp()
        self.ours.db_sync()
        # One host, written through ours.
        with self.ours.serve() as base:
            client = upstream.Client(base)
            populate.create_provider(client, 'texts-compute', COMPUTE)
            populate.set_inventories(client, COMPUTE, {
                'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096},
                'DISK_GB': {'total': 100}})

    def _both(self, requests):
        """[(upstream's answer, ours)] to each of ``requests``."""
        with self.upstream.serve() as theirs_base, \
                self.ours.serve() as ours_base:
            return [(_comparable(_request(theirs_base, *req)),
                     _comparable(_request(ours_base, *req)))
                    for req in requests]


class TestAnswerTexts(_OneHost):

    def test_error_texts(self):
        for req, (theirs, ours) in zip(ERRORS, self._both(ERRORS)):
            self.assertEqual(theirs, ours, req)

    def test_candidate_resources_in_query_order(self):
        requests = [('GET', '/allocation_candidates?' + query, None, {},
                     version) for query, version in CANDIDATE_QUERIES]
        for req, (theirs, ours) in zip(requests, self._both(requests)):
            self.assertEqual(200, theirs[0], (req, theirs))
            self.assertEqual(theirs, ours, req)


# Queries whose unsuffixed group upstream answers by another path once a
# provider of the database has a parent or the sharing trait: its
# classes come by class id (VCPU, MEMORY_MB, DISK_GB), suffixed groups'
# in the query's order, group after group.
TREE_PATH_QUERIES = CANDIDATE_QUERIES + [
    ('resources=DISK_GB:10,MEMORY_MB:512&resources1=VCPU:2'
     '&group_policy=none', '1.39'),
    ('resources1=DISK_GB:10,MEMORY_MB:1&resources=MEMORY_MB:511,VCPU:2'
     '&group_policy=none', '1.39'),
    ('resources=DISK_GB:10,VCPU:2', '1.28'),
    ('resources=DISK_GB:10,MEMORY_MB:512,VCPU:2', '1.29'),
]
# The providers that turn that path on, in no tree of the host and
# holding no inventory, so that the answers stay one candidate.
PARENT = populate.uid('texts-parent')
CHILD = populate.uid('texts-child')
SHARING = populate.uid('texts-sharing')


class TestTreePathClassOrder(_OneHost):
    """The unsuffixed group's classes with nested providers, sharing
    providers or both in the database, each beside the host."""

    def _add(self, nested, sharing):
        with self.ours.serve() as base:
            client = upstream.Client(base)
            if nested:
                populate.create_provider(client, 'texts-parent', PARENT)
                populate.create_provider(client, 'texts-child', CHILD,
                                         parent=PARENT)
            if sharing:
                populate.create_provider(client, 'texts-sharing', SHARING)
                populate.set_traits(client, SHARING,
                                    ['MISC_SHARES_VIA_AGGREGATE'])

    def _compare(self):
        requests = [('GET', '/allocation_candidates?' + query, None, {},
                     version) for query, version in TREE_PATH_QUERIES]
        differ = []
        for req, (theirs, ours) in zip(requests, self._both(requests)):
            self.assertEqual(200, theirs[0], (req, theirs))
            if theirs != ours:
                differ.append((req[1], req[4], theirs[2], ours[2]))
        self.assertEqual([], differ)

    def test_nested_without_sharing(self):
        self._add(nested=True, sharing=False)
        self._compare()

    def test_sharing_without_nested(self):
        self._add(nested=False, sharing=True)
        self._compare()

    def test_nested_and_sharing(self):
        self._add(nested=True, sharing=True)
        self._compare()


class TestSharedDiskClassOrder(_OneHost):
    """Candidates over two providers, the host and a disk it shares an
    aggregate with, beside the host's own disk: several candidates, which
    upstream lists in no set order, each compared with its keys in order
    (the classes of each provider, the summaries' classes), but for the
    order of the providers of a candidate."""

    QUERIES = [
        ('resources=DISK_GB:10,MEMORY_MB:512,VCPU:2', '1.39'),
        ('resources=MEMORY_MB:512,DISK_GB:10,VCPU:2', '1.12'),
        ('resources=DISK_GB:10,MEMORY_MB:512&resources1=VCPU:2'
         '&group_policy=none', '1.39'),
        ('resources1=DISK_GB:10&resources=VCPU:2,MEMORY_MB:512'
         '&group_policy=none', '1.39'),
    ]

    def setUp(self):
        super().setUp()
        aggregate = populate.uid('texts-aggregate')
        with self.ours.serve() as base:
            client = upstream.Client(base)
            populate.create_provider(client, 'texts-sharing', SHARING)
            populate.set_inventories(client, SHARING,
                                     {'DISK_GB': {'total': 1000}})
            populate.set_traits(client, SHARING,
                                ['MISC_SHARES_VIA_AGGREGATE'])
            for rp in (COMPUTE, SHARING):
                populate.set_aggregates(client, rp, [aggregate])

    def test_each_candidate_and_summary(self):
        requests = [('GET', '/allocation_candidates?' + query, None, {},
                     version) for query, version in self.QUERIES]
        differ = []
        for req, (theirs, ours) in zip(requests, self._both(requests)):
            self.assertEqual(200, theirs[0], (req, theirs))
            if _unordered(theirs) != _unordered(ours):
                differ.append((req[1], req[4], theirs[2], ours[2]))
        self.assertEqual([], differ)


def _unordered(answer):
    """A comparable candidates answer without the order of its candidates
    and summaries, each one's text in its keys' order; and how many
    candidates (two here: the host's disk or the shared one)."""
    document = json.loads(answer[2])
    requests = document['allocation_requests']
    summaries = document['provider_summaries']
    if isinstance(summaries, dict):
        summaries = sorted(json.dumps([uuid, summary])
                           for uuid, summary in summaries.items())
    return (len(requests), sorted(json.dumps(_by_provider(request))
                                  for request in requests), summaries)


def _by_provider(request):
    """An allocation request with its providers sorted, in its
    allocations and in each suffix's mappings (upstream's come from a
    set: their order is each side's own, see
    doc/source/server/upstream-parity.rst), each one's classes as they
    came."""
    if 'mappings' in request:
        request = dict(request, mappings={
            suffix: sorted(uuids)
            for suffix, uuids in request['mappings'].items()})
    allocations = request['allocations']
    if isinstance(allocations, dict):
        allocations = dict(sorted(allocations.items()))
    else:
        allocations = sorted(allocations, key=lambda allocation:
                             allocation['resource_provider']['uuid'])
    return dict(request, allocations=allocations)
