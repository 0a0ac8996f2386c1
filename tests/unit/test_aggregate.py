# SPDX-License-Identifier: Apache-2.0
from tests.unit import commands
from tests.unit.commands import AGG
from tests.unit.commands import url
from tests.unit.commands import UUID1
from tests.unit.commands import UUID2

AGGREGATES_URL = url('/resource_providers/%s/aggregates' % UUID1)
AGGREGATES_PATH = '/resource_providers/%s/aggregates' % UUID1
OTHER_AGG = 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb'


def aggregates(*uuids, generation=None):
    body = {'aggregates': list(uuids)}
    if generation is not None:
        body['resource_provider_generation'] = generation
    return body


class TestList(commands.CommandTestCase):

    def test_list(self):
        self.transport.get(AGGREGATES_URL, json=aggregates(AGG, OTHER_AGG))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'list',
                              UUID1, '-f', 'json', version='1.1')
        self.assert_ok(result)
        self.assertEqual([{'uuid': AGG}, {'uuid': OTHER_AGG}],
                         self.json_out(result))
        self.assertEqual(['placement 1.1'], self.versions())

    def test_generation_is_not_a_column(self):
        self.transport.get(AGGREGATES_URL, json=aggregates(AGG,
                                                           generation=3))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'list',
                              UUID1)
        self.assert_ok(result)
        self.assertEqual(['+--------------------------------------+',
                          '| uuid                                 |',
                          '+--------------------------------------+',
                          '| %s |' % AGG,
                          '+--------------------------------------+'],
                         result.stdout.splitlines())

    def test_needs_1_1(self):
        result = self.run_cmd('resource', 'provider', 'aggregate', 'list',
                              UUID1, version='1.0')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.0; requires at least version 1.1',
                         result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_unknown_provider(self):
        self.transport.get(AGGREGATES_URL, **commands.error(
            404, 'No resource provider with uuid %s found' % UUID1))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'list',
                              UUID1)
        self.assert_fails(result, 'No resource provider with uuid %s found '
                                  '(HTTP 404)' % UUID1)


class TestSet(commands.CommandTestCase):

    def test_bare_list_below_1_19(self):
        self.transport.put(AGGREGATES_URL, json=aggregates(AGG, OTHER_AGG))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--aggregate', AGG, '--aggregate',
                              OTHER_AGG, '-f', 'json', version='1.18')
        self.assert_ok(result)
        self.assertEqual([('PUT', AGGREGATES_PATH, {}, [AGG, OTHER_AGG])],
                         self.sent())
        self.assertEqual([{'uuid': AGG}, {'uuid': OTHER_AGG}],
                         self.json_out(result))

    def test_generation_from_1_19(self):
        self.transport.put(AGGREGATES_URL, json=aggregates(AGG,
                                                           generation=6))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--aggregate', AGG, '--generation', '5',
                              version='1.19')
        self.assert_ok(result)
        self.assertEqual({'aggregates': [AGG],
                          'resource_provider_generation': 5},
                         self.bodies('PUT')[0])

    def test_no_aggregate_clears(self):
        self.transport.put(AGGREGATES_URL, json=aggregates(generation=1))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--generation', '0', '-f', 'json')
        self.assert_ok(result)
        self.assertEqual({'aggregates': [],
                          'resource_provider_generation': 0},
                         self.bodies('PUT')[0])
        self.assertEqual([], self.json_out(result))

    def test_generation_required_from_1_19(self):
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--aggregate', AGG, version='1.19')
        self.assertEqual(1, result.code)
        self.assertEqual('A generation must be specified.',
                         result.stderr.strip())
        self.assertEqual([], self.sent())

    def test_generation_needs_1_19(self):
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--generation', '1', version='1.18')
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.18; requires at least version 1.19',
                         result.stderr.strip())

    def test_generation_zero_is_given(self):
        # 0 is a real generation, not "not given".
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--generation', '0', version='1.18')
        self.assert_fails(result, 'requires at least version 1.19')

    def test_generation_must_be_an_int(self):
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--generation', 'x')
        self.assert_fails(result, "argument --generation: invalid int "
                                  "value: 'x'", code=2)

    def test_needs_1_1(self):
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, version='1.0')
        self.assert_fails(result, 'requires at least version 1.1')

    def test_stale_generation(self):
        self.transport.put(AGGREGATES_URL, **commands.error(
            409, "Resource provider's generation already changed. Please "
                 "update the generation and try again.",
            code='placement.concurrent_update'))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID1, '--aggregate', AGG, '--generation', '0')
        self.assertEqual(1, result.code)
        self.assertEqual("Resource provider's generation already changed. "
                         "Please update the generation and try again. "
                         "(HTTP 409)", result.stderr.strip())
        self.assertEqual(1, len(self.sent()))

    def test_bad_uuid(self):
        self.transport.put(AGGREGATES_URL, **commands.error(
            400, "JSON does not validate: 'x' is not a 'uuid'"))
        result = self.run_cmd('resource', 'provider', 'aggregate', 'set',
                              UUID2, '--aggregate', 'x', '--generation', '0')
        self.assertEqual(1, result.code)
        self.assertEqual([], [r for r in self.sent()
                              if r[1] == AGGREGATES_PATH])
