# SPDX-License-Identifier: Apache-2.0
"""``trait ...`` and ``resource provider trait ...`` against our server.

Traits arrived in 1.6 and no later microversion changes these commands, so
the tests run at 1.6, at 1.39 and with the negotiated default; below 1.6
every command fails with the gate text.
"""

import uuid

from tests.functional import base

AVX = 'HW_CPU_X86_AVX'
SSE = 'HW_CPU_X86_SSE'
INVALID = ('The trait is invalid. A valid trait must be no longer than 255 '
           'characters, start with the prefix "CUSTOM_" and use following '
           'characters: "A"-"Z", "0"-"9" and "_" (HTTP 400)')


def names(rows):
    return [row['name'] for row in rows]


class TraitTests:

    def traits(self, *options):
        return names(self.openstack(['trait', 'list'] + list(options),
                                    use_json=True))

    def provider_traits(self, rp):
        return names(self.openstack(
            ['resource', 'provider', 'trait', 'list', rp], use_json=True))

    def test_create_show_delete(self):
        name = self.unique_custom()
        self.assertEqual('', self.openstack(['trait', 'create', name]))
        # Creating it again is fine.
        self.assertEqual('', self.openstack(['trait', 'create', name]))
        self.assertEqual({'name': name}, self.openstack(
            ['trait', 'show', name], use_json=True))
        self.assertEqual([name], self.traits('--name', 'in:' + name))
        self.assertEqual('', self.openstack(['trait', 'delete', name]))
        self.assertEqual([], self.traits('--name', 'in:' + name))
        missing = 'No such trait(s): %s. (HTTP 404)' % name
        self.assertCommandFails(['trait', 'show', name], missing)
        self.assertCommandFails(['trait', 'delete', name], missing)

    def test_trait_errors(self):
        self.assertCommandFails(['trait', 'create', 'CUSTOM_lower'], INVALID)
        self.assertCommandFails(['trait', 'create', 'NOT_CUSTOM'], INVALID)
        self.assertCommandFails(
            ['trait', 'delete', AVX],
            'Cannot delete standard trait %s. (HTTP 400)' % AVX)
        self.assertEqual({'name': AVX}, self.openstack(
            ['trait', 'show', AVX], use_json=True))

    def test_list_filters(self):
        prefix = self.unique_custom('CUSTOM_FTL')
        first, second = prefix + '_A', prefix + '_B'
        for name in (second, first):
            self.openstack(['trait', 'create', name])
        # In trait id (creation) order, as upstream lists them.
        self.assertEqual([second, first],
                         self.traits('--name', 'startswith:' + prefix))
        self.assertEqual([first], self.traits(
            '--name', 'in:%s,%s_MISSING' % (first, prefix)))
        self.assertEqual([], self.traits(
            '--name', 'startswith:' + prefix, '--associated'))
        rp = self.create_provider()['uuid']
        self.set_provider_traits(rp, [second])
        self.assertEqual([second], self.traits(
            '--name', 'startswith:' + prefix, '--associated'))
        standard = self.traits('--name', 'startswith:HW_CPU_X86_SS')
        self.assertIn(SSE, standard)
        self.assertTrue(all(n.startswith('HW_CPU_X86_SS') for n in standard))
        everything = self.traits()
        self.assertTrue({AVX, SSE, first, second} <= set(everything))
        self.assertCommandFails(
            ['trait', 'list', '--name', AVX],
            'Badly formatted name parameter. Expected name query string '
            'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
            'Got: "%s" (HTTP 400)' % AVX)
        # As upstream, an unknown operator filters nothing.
        self.assertTrue({AVX, SSE, first, second}
                        <= set(self.traits('--name', 'bogus:X')))

    def test_provider_traits(self):
        custom = self.create_trait()
        rp = self.create_provider()['uuid']
        self.assertEqual([], self.provider_traits(rp))
        rows = self.openstack(['resource', 'provider', 'trait', 'set', rp,
                               '--trait', custom, '--trait', AVX],
                              use_json=True)
        self.assertEqual(sorted([custom, AVX]), sorted(names(rows)))
        self.assertEqual(sorted([custom, AVX]),
                         sorted(self.provider_traits(rp)))
        self.assertEqual(1, self.provider_generation(rp))
        self.assertCommandFails(
            ['trait', 'delete', custom],
            'The trait %s is in use by a resource provider. (HTTP 409)'
            % custom)
        # set replaces the whole set.
        rows = self.openstack(['resource', 'provider', 'trait', 'set', rp,
                               '--trait', SSE], use_json=True)
        self.assertEqual([SSE], names(rows))
        self.assertEqual(2, self.provider_generation(rp))
        self.assertEqual('', self.openstack(['trait', 'delete', custom]))
        self.assertEqual([], names(self.openstack(
            ['resource', 'provider', 'trait', 'set', rp], use_json=True)))
        self.set_provider_traits(rp, [AVX])
        self.assertEqual('', self.openstack(
            ['resource', 'provider', 'trait', 'delete', rp]))
        self.assertEqual([], self.provider_traits(rp))

    def test_provider_trait_errors(self):
        rp = self.create_provider()['uuid']
        missing = self.unique_custom('CUSTOM_NOPE')
        self.assertCommandFails(
            ['resource', 'provider', 'trait', 'set', rp, '--trait', missing],
            'No such trait %s (HTTP 400)' % missing)
        self.assertEqual([], self.provider_traits(rp))
        nobody = str(uuid.uuid4())
        for cmd in (['list', nobody], ['delete', nobody],
                    ['set', nobody, '--trait', AVX]):
            result = self.assertCommandFails(
                ['resource', 'provider', 'trait'] + cmd,
                'No resource provider with uuid %s found' % nobody)
            self.assertEndsWithRequestId(result.stderr, 404)

    def test_set_after_concurrent_change_is_refused(self):
        rp = self.create_provider()['uuid']
        path = '/resource_providers/' + rp

        def concurrent(send):
            send('PUT', path + '/traits', json={
                'traits': [SSE], 'resource_provider_generation': 0})

        with self.meanwhile('GET', path, concurrent):
            self.assertCommandFails(
                ['resource', 'provider', 'trait', 'set', rp, '--trait', AVX],
                "Resource provider's generation already changed. Please "
                "update the generation and try again. (HTTP 409)")
        self.assertEqual([SSE], self.provider_traits(rp))


class TestTrait1_6(TraitTests, base.FunctionalTestCase):
    VERSION = '1.6'


class TestTrait1_39(TraitTests, base.FunctionalTestCase):
    VERSION = '1.39'


class TestTraitNegotiated(TraitTests, base.FunctionalTestCase):
    VERSION = None

    def test_negotiates_the_maximum(self):
        calls = self.record_requests()
        result = self.openstack(['trait', 'list', '--name', 'in:' + AVX,
                                 '-f', 'json'], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual(['1.39', '1.39'], [sent.version for sent in calls])
        self.assertEqual([('GET', '/'), ('GET', '/traits?name=in%3A' + AVX)],
                         [sent.request for sent in calls])


class TestTraitGate(base.FunctionalTestCase):
    VERSION = '1.5'

    def test_every_command_needs_1_6(self):
        rp = str(uuid.uuid4())
        for cmd in (['trait', 'list'], ['trait', 'show', AVX],
                    ['trait', 'create', 'CUSTOM_X'], ['trait', 'delete', AVX],
                    ['resource', 'provider', 'trait', 'list', rp],
                    ['resource', 'provider', 'trait', 'set', rp],
                    ['resource', 'provider', 'trait', 'delete', rp]):
            result = self.assertCommandFails(
                cmd, base.GATE % ('1.5', '1.6'))
            self.assertEqual(1, len(result.stderr.strip().splitlines()),
                             result.stderr)
