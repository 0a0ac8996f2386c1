"""The order of classes and groups in GET /allocation_candidates, through
the WSGI app: each provider's resources in the order the query names the
classes, group after group, and the mappings in the order it names the
groups, as upstream answers (tests/compat/test_answer_texts.py compares
the two). Queries that differ only in that order are asked one after the
other, so that no answer, candidate or body kept for one is sent for the
other."""

from tests.server import test_bad_input

ORDERS = ('VCPU:1,MEMORY_MB:64,DISK_GB:10', 'DISK_GB:10,VCPU:1,MEMORY_MB:64',
          'MEMORY_MB:64,DISK_GB:10,VCPU:1')
HOST_ONLY = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 100}}


def names(resources):
    return [name.split(':')[0] for name in resources.split(',')]


class _Candidates(test_bad_input.AppTestCase):

    def candidates(self, query, version='placement 1.39'):
        status, body = self.call('GET', '/allocation_candidates?' + query,
                                 version=version)
        self.assertEqual(200, status, body)
        return body['allocation_requests']


class TestOneHost(_Candidates):

    def setUp(self):
        super().setUp()
        self.host = self.provider(**HOST_ONLY)

    def test_dict_form_keeps_the_query_order(self):
        for _ in range(2):  # the second round is answered from memory
            for resources in ORDERS:
                [request] = self.candidates('resources=' + resources)
                self.assertEqual(
                    names(resources),
                    list(request['allocations'][self.host]['resources']))

    def test_list_form_keeps_the_query_order(self):
        for resources in ORDERS:
            [request] = self.candidates('resources=' + resources,
                                        version='placement 1.10')
            [allocation] = request['allocations']
            self.assertEqual(names(resources),
                             list(allocation['resources']))

    def test_groups_in_the_query_order(self):
        for query, classes, suffixes in (
                ('resources1=MEMORY_MB:64,VCPU:1&resources=DISK_GB:10',
                 ['MEMORY_MB', 'VCPU', 'DISK_GB'], ['1', '']),
                ('resources=DISK_GB:10&resources1=MEMORY_MB:64,VCPU:1',
                 ['DISK_GB', 'MEMORY_MB', 'VCPU'], ['', '1']),
                ('resources2=VCPU:1&resources1=DISK_GB:10,MEMORY_MB:64',
                 ['VCPU', 'DISK_GB', 'MEMORY_MB'], ['2', '1'])):
            [request] = self.candidates(query + '&group_policy=none')
            self.assertEqual(
                classes, list(request['allocations'][self.host]['resources']),
                query)
            self.assertEqual(suffixes, list(request['mappings']), query)


class TestHostAndSharedDisk(_Candidates):
    """A request whose candidates take classes from two providers.

    With a sharing provider in the cloud upstream lists the unsuffixed
    group's classes by class id instead (doc/source/server/
    upstream-parity.rst): the orders asked here name VCPU before
    MEMORY_MB, where both orders agree and names' order does not."""

    def setUp(self):
        super().setUp()
        self.host = self.provider(VCPU={'total': 8},
                                  MEMORY_MB={'total': 4096})
        self.disk = self.provider(DISK_GB={'total': 100})
        aggregate = '11111111-2222-3333-4444-555555555555'
        for uuid in (self.host, self.disk):
            status, _ = self.call(
                'PUT', '/resource_providers/%s/aggregates' % uuid,
                {'aggregates': [aggregate],
                 'resource_provider_generation': 1})
            self.assertEqual(200, status)
        status, _ = self.call(
            'PUT', '/resource_providers/%s/traits' % self.disk,
            {'traits': ['MISC_SHARES_VIA_AGGREGATE'],
             'resource_provider_generation': 2})
        self.assertEqual(200, status)

    def test_each_provider_keeps_the_query_order(self):
        for _ in range(2):
            for resources in ORDERS[:2]:
                [request] = self.candidates('resources=' + resources)
                allocations = request['allocations']
                self.assertEqual(
                    [name for name in names(resources) if name != 'DISK_GB'],
                    list(allocations[self.host]['resources']))
                self.assertEqual(['DISK_GB'],
                                 list(allocations[self.disk]['resources']))
