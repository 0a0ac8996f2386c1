import json
from urllib import parse

from tests.unit import fakes
from tests.unit import shell

RP = '4e8e5957-649f-477b-9e5b-f1f75b21c03c'


def query_of(request):
    # requests-mock lower-cases its own view of the query; read the URL.
    return parse.parse_qs(parse.urlsplit(request.url).query)


class TraitTestCase(fakes.TransportTestCase):

    def run_cmd(self, version, *argv):
        return shell.run_openstack(self, '--os-placement-api-version',
                                   version, *argv)

    def url(self, path):
        return fakes.ENDPOINT + path

    def assert_needs_1_6(self, *argv):
        result = self.run_cmd('1.5', *argv)
        self.assertEqual(1, result.code)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.5; requires at least version 1.6',
                         result.stderr.strip())
        self.assertEqual([], self.transport.request_history)


class TestListTrait(TraitTestCase):

    def test_lists_names(self):
        self.transport.get(self.url('/traits'), json={
            'traits': ['HW_CPU_X86_AVX', 'CUSTOM_FOO']})
        result = self.run_cmd('1.6', 'trait', 'list', '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([{'name': 'HW_CPU_X86_AVX'}, {'name': 'CUSTOM_FOO'}],
                         json.loads(result.stdout))
        self.assertEqual({}, query_of(self.transport.last_request))
        self.assertEqual(['placement 1.6'], self.versions_sent())

    def test_filters_are_passed_verbatim(self):
        self.transport.get(self.url('/traits'), json={'traits': []})
        result = self.run_cmd('1.6', 'trait', 'list', '--name',
                              'startswith:CUSTOM', '--associated')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual({'name': ['startswith:CUSTOM'],
                          'associated': ['True']},
                         query_of(self.transport.last_request))

    def test_needs_1_6(self):
        self.assert_needs_1_6('trait', 'list')


class TestShowCreateDeleteTrait(TraitTestCase):

    def test_show_echoes_the_name(self):
        self.transport.get(self.url('/traits/CUSTOM_FOO'), status_code=204)
        result = self.run_cmd('1.6', 'trait', 'show', 'CUSTOM_FOO',
                              '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual({'name': 'CUSTOM_FOO'}, json.loads(result.stdout))
        self.assertEqual([('GET', '/traits/custom_foo')], self.paths_sent())

    def test_show_unknown(self):
        self.transport.get(self.url('/traits/CUSTOM_NO'), status_code=404,
                           json=fakes.placement_error(
                               404, 'Not Found',
                               'No such trait(s): CUSTOM_NO.'))
        result = self.run_cmd('1.6', 'trait', 'show', 'CUSTOM_NO')
        self.assertEqual(1, result.code)
        self.assertEqual('No such trait(s): CUSTOM_NO. (HTTP 404)',
                         result.stderr.strip())

    def test_create_puts(self):
        self.transport.put(self.url('/traits/CUSTOM_FOO'), status_code=201)
        result = self.run_cmd('1.6', 'trait', 'create', 'CUSTOM_FOO')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertEqual([('PUT', '/traits/custom_foo')], self.paths_sent())
        self.assertEqual(['placement 1.6'], self.versions_sent())

    def test_delete(self):
        self.transport.delete(self.url('/traits/CUSTOM_FOO'), status_code=204)
        result = self.run_cmd('1.6', 'trait', 'delete', 'CUSTOM_FOO')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([('DELETE', '/traits/custom_foo')],
                         self.paths_sent())

    def test_gates(self):
        for argv in (('show', 'X'), ('create', 'X'), ('delete', 'X')):
            self.assert_needs_1_6('trait', *argv)


class TestResourceProviderTrait(TraitTestCase):

    def traits_url(self):
        return self.url('/resource_providers/%s/traits' % RP)

    def test_list(self):
        self.transport.get(self.traits_url(), json={
            'traits': ['CUSTOM_FOO'], 'resource_provider_generation': 3})
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'list',
                              RP)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn('| CUSTOM_FOO |', result.stdout)
        self.assertEqual([('GET', '/resource_providers/%s/traits' % RP)],
                         self.paths_sent())

    def test_list_unknown_provider(self):
        self.transport.get(self.traits_url(), status_code=404, json=(
            fakes.placement_error(404, 'Not Found',
                                  'No resource provider with uuid %s found'
                                  % RP)))
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'list',
                              RP)
        self.assertEqual(1, result.code)
        self.assertEqual('No resource provider with uuid %s found (HTTP 404)'
                         % RP, result.stderr.strip())

    def test_set_sends_the_generation_read_first(self):
        self.transport.get(self.url('/resource_providers/' + RP), json={
            'uuid': RP, 'name': 'cn1', 'generation': 7})
        self.transport.put(self.traits_url(), json={
            'traits': ['CUSTOM_FOO', 'HW_CPU_X86_AVX'],
            'resource_provider_generation': 8})
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'set',
                              RP, '--trait', 'CUSTOM_FOO', '--trait',
                              'HW_CPU_X86_AVX', '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([{'name': 'CUSTOM_FOO'}, {'name': 'HW_CPU_X86_AVX'}],
                         json.loads(result.stdout))
        self.assertEqual([('GET', '/resource_providers/%s' % RP),
                          ('PUT', '/resource_providers/%s/traits' % RP)],
                         self.paths_sent())
        self.assertEqual({'resource_provider_generation': 7,
                          'traits': ['CUSTOM_FOO', 'HW_CPU_X86_AVX']},
                         self.transport.last_request.json())

    def test_set_without_traits_clears(self):
        self.transport.get(self.url('/resource_providers/' + RP), json={
            'uuid': RP, 'generation': 1})
        self.transport.put(self.traits_url(), json={
            'traits': [], 'resource_provider_generation': 2})
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'set',
                              RP, '-f', 'json')
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([], json.loads(result.stdout))
        self.assertEqual({'resource_provider_generation': 1, 'traits': []},
                         self.transport.last_request.json())

    def test_set_unknown_trait(self):
        self.transport.get(self.url('/resource_providers/' + RP), json={
            'uuid': RP, 'generation': 1})
        self.transport.put(self.traits_url(), status_code=400, json=(
            fakes.placement_error(400, 'Bad Request',
                                  'No such trait CUSTOM_X')))
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait', 'set',
                              RP, '--trait', 'CUSTOM_X')
        self.assertEqual(1, result.code)
        self.assertEqual('No such trait CUSTOM_X (HTTP 400)',
                         result.stderr.strip())

    def test_delete(self):
        self.transport.delete(self.traits_url(), status_code=204)
        result = self.run_cmd('1.6', 'resource', 'provider', 'trait',
                              'delete', RP)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([('DELETE', '/resource_providers/%s/traits' % RP)],
                         self.paths_sent())

    def test_gates(self):
        for argv in (('list', RP), ('set', RP), ('delete', RP)):
            self.assert_needs_1_6('resource', 'provider', 'trait', *argv)
