# SPDX-License-Identifier: Apache-2.0
"""Parser tests: every parameter at its version boundary, every 400 text."""

import hypothesis
from hypothesis import strategies as st
import testtools

from osc_placement.server import errors
from osc_placement.server import microversion
from osc_placement.server import schemas
from osc_placement.server.schemas import allocation_candidate as ac_schema
from osc_placement.server.schemas import request_groups as rg
from osc_placement.server.schemas import resource_provider as rp_schema

AGG1 = 'a1a1a1a1-0000-4000-8000-000000000001'
AGG2 = 'a2a2a2a2-0000-4000-8000-000000000002'
RP1 = 'b1b1b1b1-0000-4000-8000-000000000001'
LATEST = (1, 39)


class ParseHelpers(testtools.TestCase):

    def parse(self, pairs, version=LATEST):
        """What the handler does with a query: check it, then parse it."""
        ac_schema.check_query(rg.as_pairs(pairs), version)
        return rg.parse_candidate_request(pairs, version)

    def assert_400(self, pairs, version, text, code=errors.DEFAULT):
        exc = self.assertRaises(errors.BadRequest, self.parse, pairs,
                                version)
        self.assertIn(text, exc.detail)
        self.assertEqual(code, exc.code)
        return exc


class TestResources(ParseHelpers):

    def test_amounts(self):
        req = self.parse([('resources', 'VCPU:2,MEMORY_MB:1024')])
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024},
                         req.group('').resources)

    def test_duplicate_class_last_wins(self):
        req = self.parse([('resources', 'VCPU:2,VCPU:3')])
        self.assertEqual({'VCPU': 3}, req.group('').resources)

    def test_repeated_key_last_wins(self):
        req = self.parse([('resources', 'VCPU:2'), ('resources', 'DISK_GB:1')])
        self.assertEqual({'DISK_GB': 1}, req.group('').resources)

    def test_empty(self):
        self.assert_400([('resources', ' ')], LATEST,
                        'Badly formed resources parameter. Expected resources '
                        'query string parameter in form: '
                        '?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.')

    def test_trailing_comma(self):
        self.assert_400([('resources', 'VCPU:1,')], LATEST,
                        'MEMORY_MB:1024. Got: .')

    def test_no_colon(self):
        self.assert_400([('resources', 'VCPU')], LATEST, 'Got: VCPU.')

    def test_two_colons(self):
        self.assert_400([('resources', 'VCPU:1:2')], LATEST, 'Got: VCPU:1:2.')

    def test_non_integer(self):
        self.assert_400([('resources', 'VCPU:x')], LATEST,
                        'Requested resource VCPU expected positive integer '
                        'amount. Got: x.')

    def test_zero(self):
        self.assert_400([('resources', 'VCPU:0')], LATEST,
                        'Requested resource VCPU requires amount >= 1. '
                        'Got: 0.')

    def test_negative(self):
        self.assert_400([('resources', 'VCPU:-2')], LATEST,
                        'requires amount >= 1. Got: -2.')


class TestSchemaGates(ParseHelpers):

    def test_resources_required_before_1_25(self):
        self.assert_400([('limit', '1')], (1, 24),
                        "'resources' is a required property")

    def test_limit_gate(self):
        self.assert_400([('resources', 'VCPU:1'), ('limit', '1')], (1, 15),
                        "Additional properties are not allowed ('limit' was "
                        "unexpected)")
        self.assertEqual(1, self.parse([('resources', 'VCPU:1'),
                                        ('limit', '1')], (1, 16)).limit)

    def test_limit_bad_value(self):
        self.assert_400([('resources', 'VCPU:1'), ('limit', '0')], (1, 16),
                        "Invalid query string parameters: '0' does not match")

    def test_limit_first_value_used(self):
        req = self.parse([('resources', 'VCPU:1'), ('limit', '3'),
                          ('limit', '5')])
        self.assertEqual(3, req.limit)

    def test_required_gate(self):
        pairs = [('resources', 'VCPU:1'), ('required', 'HW_CPU_X86_VMX')]
        self.assert_400(pairs, (1, 16), "('required' was unexpected)")
        self.assertEqual((frozenset(['HW_CPU_X86_VMX']),),
                         self.parse(pairs, (1, 17)).group('').required_traits)

    def test_member_of_gate(self):
        pairs = [('resources', 'VCPU:1'), ('member_of', AGG1)]
        self.assert_400(pairs, (1, 20), "('member_of' was unexpected)")
        self.assertEqual((frozenset([AGG1]),),
                         self.parse(pairs, (1, 21)).group('').member_of)

    def test_granular_gate(self):
        pairs = [('resources1', 'VCPU:1')]
        self.assert_400(pairs, (1, 24), "'resources' is a required property")
        req = self.parse(pairs, (1, 25))
        self.assertEqual(['1'], [g.suffix for g in req.groups])

    def test_in_tree_gate(self):
        pairs = [('resources', 'VCPU:1'), ('in_tree', RP1)]
        self.assert_400(pairs, (1, 30),
                        "'in_tree' does not match any of the regexes")
        self.assertEqual(RP1, self.parse(pairs, (1, 31)).group('').in_tree)

    def test_string_suffix_gate(self):
        pairs = [('resources_COMPUTE', 'VCPU:1')]
        self.assert_400(pairs, (1, 32),
                        "'resources_COMPUTE' does not match any of the "
                        "regexes")
        req = self.parse(pairs, (1, 33))
        self.assertEqual('_COMPUTE', req.groups[0].suffix)

    def test_suffix_too_long(self):
        self.assert_400([('resources' + 'x' * 65, 'VCPU:1')], (1, 33),
                        'does not match any of the regexes')

    def test_root_required_gate(self):
        pairs = [('resources', 'VCPU:1'), ('root_required', 'HW_CPU_X86_VMX')]
        self.assert_400(pairs, (1, 34), "'root_required' does not match")
        self.assertEqual(frozenset(['HW_CPU_X86_VMX']),
                         self.parse(pairs, (1, 35)).root_required)

    def test_same_subtree_gate(self):
        pairs = [('resources1', 'VCPU:1'), ('resources2', 'VCPU:1'),
                 ('group_policy', 'none'), ('same_subtree', '1,2')]
        self.assert_400(pairs, (1, 35), "'same_subtree' does not match")
        self.assertEqual((frozenset(['1', '2']),),
                         self.parse(pairs, (1, 36)).same_subtrees)

    def test_group_policy_enum(self):
        self.assert_400([('resources', 'VCPU:1'), ('group_policy', 'x')],
                        (1, 25), "'x' is not one of ['none', 'isolate']")

    def test_group_policy_gate(self):
        self.assert_400([('resources', 'VCPU:1'), ('group_policy', 'none')],
                        (1, 24), "('group_policy' was unexpected)")

    def test_dict_query(self):
        req = self.parse({'resources': ['VCPU:1'], 'limit': '2'})
        self.assertEqual(2, req.limit)


class TestSchemaMemo(ParseHelpers):
    """A query that passed its schema is not checked again; one that
    failed is, every time, and fails every time."""

    def setUp(self):
        super().setUp()
        schemas._query_passes.cache_clear()
        self.addCleanup(schemas._query_passes.cache_clear)
        self.checks = []
        check = schemas._check
        self.patch(schemas, '_check', lambda validator, query, template: (
            self.checks.append(query), check(validator, query, template)))

    def test_a_passing_query_is_checked_once(self):
        pairs = [('resources', 'VCPU:1'), ('limit', '10')]
        for _ in range(3):
            self.assertEqual(10, self.parse(pairs).limit)
        self.assertEqual(1, len(self.checks))
        # Another version has its own schema.
        self.parse(pairs, (1, 30))
        self.assertEqual(2, len(self.checks))

    def test_a_failing_query_fails_every_time(self):
        for _ in range(2):
            self.assert_400([('resources', 'VCPU:1'), ('limit', '0')],
                            (1, 16), "'0' does not match")
        self.assertEqual(2, len(self.checks))

    def test_a_long_query_is_not_remembered(self):
        pairs = [('resources', 'VCPU:1'), ('limit', '1' * 3000)]
        for _ in range(2):
            self.parse(pairs)
        self.assertEqual(2, len(self.checks))
        self.assertEqual(0, schemas._query_passes.cache_info().currsize)


class TestRequired(ParseHelpers):

    def test_forbidden_before_1_22(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'A,!B')],
                        (1, 21),
                        "Invalid query string parameters: Expected 'required' "
                        "parameter value of the form: HW_CPU_X86_VMX,"
                        "CUSTOM_MAGIC. Got: A,!B")

    def test_forbidden_from_1_22(self):
        group = self.parse([('resources', 'VCPU:1'), ('required', 'A,!B')],
                           (1, 22)).group('')
        self.assertEqual((frozenset(['A']),), group.required_traits)
        self.assertEqual(frozenset(['B']), group.forbidden_traits)

    def test_many_bangs_are_one(self):
        group = self.parse([('resources', 'VCPU:1'),
                            ('required', '!!!B')]).group('')
        self.assertEqual(frozenset(['B']), group.forbidden_traits)

    def test_empty_trait(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'A,,B')],
                        (1, 22),
                        "Expected 'required' parameter value of the form: "
                        "HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: "
                        "A,,B")

    def test_empty_trait_before_forbidden(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'A,')],
                        (1, 21),
                        "of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an "
                        "empty trait in: A,")

    def test_lone_bang_is_empty(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', '!')],
                        LATEST, 'Got an empty trait in: !')

    def test_in_before_1_39(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'in:A,B')],
                        (1, 38),
                        "Invalid query string parameters: The format "
                        "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported "
                        "since microversion 1.39. Got: in:A,B")

    def test_in_with_forbidden(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'in:A,!B')],
                        LATEST,
                        "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not "
                        "support forbidden traits. Got: in:A,!B")

    def test_in_empty(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'in:A,')],
                        LATEST,
                        "Expected 'required' parameter value of the form: "
                        "in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait "
                        "in: in:A,")

    def test_repeated_last_wins_before_1_39(self):
        group = self.parse([('resources', 'VCPU:1'), ('required', 'A'),
                            ('required', 'B')], (1, 38)).group('')
        self.assertEqual((frozenset(['B']),), group.required_traits)

    def test_repeated_anded_from_1_39(self):
        group = self.parse([('resources', 'VCPU:1'), ('required', 'in:C,D'),
                            ('required', 'A,!B')]).group('')
        self.assertEqual((frozenset(['C', 'D']), frozenset(['A'])),
                         group.required_traits)
        self.assertEqual(frozenset(['B']), group.forbidden_traits)

    def test_conflict(self):
        self.assert_400([('resources1', 'VCPU:1'), ('required1', 'A,!A')],
                        (1, 25),
                        'Conflicting required and forbidden traits found in '
                        'the following traits keys: required1: (A)')

    def test_any_of_conflict_only_when_all_forbidden(self):
        pairs = [('resources', 'VCPU:1'), ('required', 'in:A,B'),
                 ('required', '!A')]
        self.parse(pairs)
        self.assert_400(pairs + [('required', '!B')], LATEST,
                        'required: (A, B)')


class TestMemberOf(ParseHelpers):

    def test_comma_without_in(self):
        self.assert_400([('resources', 'VCPU:1'),
                         ('member_of', AGG1 + ',' + AGG2)], LATEST,
                        "Multiple values for 'member_of' must be prefixed "
                        "with the 'in:' or '!in:' keyword using the valid "
                        "microversion. Got: %s,%s" % (AGG1, AGG2))

    def test_not_uuid(self):
        self.assert_400([('resources', 'VCPU:1'),
                         ('member_of', 'in:%s,!%s' % (AGG1, AGG2))], LATEST,
                        "Invalid query string parameters: Expected "
                        "'member_of' parameter to contain valid UUID(s). "
                        "Got: !" + AGG2)

    def test_dashless_uuid_accepted(self):
        dashless = AGG1.replace('-', '').upper()
        group = self.parse([('resources', 'VCPU:1'),
                            ('member_of', dashless)]).group('')
        self.assertEqual((frozenset([dashless]),), group.member_of)

    def test_repeat_before_1_24(self):
        self.assert_400([('resources', 'VCPU:1'), ('member_of', AGG1),
                         ('member_of', AGG2)], (1, 23),
                        'Multiple member_of parameters are not supported')

    def test_repeat_from_1_24(self):
        group = self.parse([('resources', 'VCPU:1'),
                            ('member_of', 'in:%s,%s' % (AGG1, AGG2)),
                            ('member_of', AGG1)], (1, 24)).group('')
        self.assertEqual((frozenset([AGG1, AGG2]), frozenset([AGG1])),
                         group.member_of)

    def test_forbidden_before_1_32(self):
        self.assert_400([('resources', 'VCPU:1'), ('member_of', '!' + AGG1)],
                        (1, 31),
                        'Forbidden member_of parameters are not supported in '
                        'the specified microversion')

    def test_forbidden_from_1_32(self):
        group = self.parse([('resources', 'VCPU:1'),
                            ('member_of', '!in:%s,%s' % (AGG1, AGG2)),
                            ('member_of', '!' + AGG1)], (1, 32)).group('')
        self.assertEqual((), group.member_of)
        self.assertEqual(frozenset([AGG1, AGG2]), group.forbidden_aggs)


class TestInTree(ParseHelpers):

    def test_bad_uuid(self):
        self.assert_400([('resources', 'VCPU:1'), ('in_tree', 'x')], LATEST,
                        "Invalid query string parameters: Expected 'in_tree' "
                        "parameter to be a format of uuid. Got: x")

    def test_stripped(self):
        req = self.parse([('resources', 'VCPU:1'), ('in_tree', ' %s ' % RP1)])
        self.assertEqual(RP1, req.group('').in_tree)


class TestGroups(ParseHelpers):

    def test_order_of_first_appearance(self):
        req = self.parse([('resources2', 'VCPU:1'), ('resources', 'VCPU:1'),
                          ('required1', 'A'), ('resources1', 'VCPU:1'),
                          ('group_policy', 'none')])
        self.assertEqual(['2', '', '1'], [g.suffix for g in req.groups])
        self.assertFalse(req.group('').use_same_provider)
        self.assertTrue(req.group('2').use_same_provider)

    def test_group_policy_required(self):
        self.assert_400([('resources1', 'VCPU:1'), ('resources2', 'VCPU:1')],
                        (1, 25),
                        'The "group_policy" parameter is required when '
                        'specifying more than one "resources{N}" parameter.')

    def test_group_policy_not_required_for_one_suffixed(self):
        req = self.parse([('resources', 'VCPU:1'), ('resources1', 'VCPU:1')])
        self.assertIsNone(req.group_policy)

    def test_group_policy_first_value(self):
        req = self.parse([('resources', 'VCPU:1'), ('group_policy', 'isolate'),
                          ('group_policy', 'none')])
        self.assertEqual('isolate', req.group_policy)

    def test_orphan_traits(self):
        self.assert_400([('resources', 'VCPU:1'), ('required', 'A'),
                         ('required1', 'B')], (1, 35),
                        'All traits parameters must be associated with '
                        'resources.  Found the following orphaned traits '
                        'keys: required1')

    def test_orphan_traits_unsuffixed(self):
        self.assert_400([('resources1', 'VCPU:1'), ('required', 'A')],
                        (1, 25), 'orphaned traits keys: required')

    def test_orphan_member_of(self):
        self.assert_400([('resources', 'VCPU:1'), ('member_of1', AGG1)],
                        (1, 25),
                        'All member_of parameters must be associated with '
                        'resources. Found the following orphaned member_of '
                        'keys: member_of1')

    def test_orphan_forbidden_member_of(self):
        self.assert_400([('resources', 'VCPU:1'),
                         ('member_of1', '!' + AGG1)], (1, 32),
                        'orphaned member_of keys: member_of1')

    def test_resourceless_in_tree_before_1_36(self):
        self.assert_400([('resources', 'VCPU:1'), ('in_tree1', RP1)],
                        (1, 35), 'All request groups must specify resources.')

    def test_only_forbidden_traits_before_1_36(self):
        # Forbidden-only traits are not "orphaned traits" upstream; the
        # generic message reports them.
        self.assert_400([('resources', 'VCPU:1'), ('required1', '!A')],
                        (1, 35), 'All request groups must specify resources.')

    def test_no_group_before_1_36(self):
        self.assert_400([('group_policy', 'none')], (1, 35),
                        'At least one request group (`resources` or '
                        '`resources{$S}`) is required.')

    def test_no_resources_from_1_36(self):
        self.assert_400([('required1', 'A'), ('same_subtree', '1')], (1, 36),
                        'There must be at least one resources or '
                        'resources[$S] parameter.',
                        errors.QUERYPARAM_MISSING_VALUE)

    def test_no_group_at_all_from_1_36(self):
        self.assert_400([], (1, 36), 'There must be at least one resources',
                        errors.QUERYPARAM_MISSING_VALUE)

    def test_resourceless_must_be_in_same_subtree(self):
        self.assert_400([('resources1', 'VCPU:1'), ('required2', 'A'),
                         ('group_policy', 'none')], (1, 36),
                        "Resourceless suffixed group request should be "
                        "specified in `same_subtree` query param: bad "
                        "group(s) - ['2'].", errors.QUERYPARAM_BAD_VALUE)

    def test_resourceless_unsuffixed_never_allowed(self):
        self.assert_400([('resources1', 'VCPU:1'), ('required', 'A'),
                         ('same_subtree', '1')], (1, 36),
                        "bad group(s) - [''].", errors.QUERYPARAM_BAD_VALUE)

    def test_same_subtree_unknown_suffix(self):
        self.assert_400([('resources1', 'VCPU:1'), ('same_subtree', '1,3')],
                        (1, 36),
                        "Real suffixes should be specified in "
                        "`same_subtree`: ['3'] not found in ['1'].",
                        errors.QUERYPARAM_BAD_VALUE)

    def test_same_subtree_empty_item(self):
        self.assert_400([('resources1', 'VCPU:1'), ('same_subtree', '1,')],
                        (1, 36),
                        'Empty string (unsuffixed group) can not be '
                        'specified in `same_subtree` ',
                        errors.QUERYPARAM_BAD_VALUE)

    def test_resourceless_group_accepted(self):
        req = self.parse([('resources1', 'VCPU:1'), ('required2', 'A'),
                          ('same_subtree', '1,2'), ('group_policy', 'none')],
                         (1, 36))
        self.assertEqual({}, req.group('2').resources)

    def test_resourceless_counts_for_group_policy(self):
        self.assert_400([('resources1', 'VCPU:1'), ('required2', 'A'),
                         ('same_subtree', '1,2')], (1, 36),
                        'The "group_policy" parameter is required')


class TestRootRequired(ParseHelpers):

    def base(self, *values):
        return [('resources', 'VCPU:1')] + [('root_required', v)
                                            for v in values]

    def test_parsed(self):
        req = self.parse(self.base('A,!B'))
        self.assertEqual(frozenset(['A']), req.root_required)
        self.assertEqual(frozenset(['B']), req.root_forbidden)

    def test_only_once(self):
        self.assert_400(self.base('A', 'B'), LATEST,
                        "Query parameter 'root_required' may be specified "
                        "only once.", errors.QUERYPARAM_DUPLICATE_KEY)

    def test_no_in(self):
        self.assert_400(self.base('in:A,B'), LATEST,
                        'only supported since microversion 1.39. Got: in:A,B')

    def test_empty_item(self):
        self.assert_400(self.base('A,'), LATEST,
                        "HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: "
                        "A,")

    def test_conflict(self):
        self.assert_400(self.base('A,!A'), LATEST,
                        'Conflicting required and forbidden traits found in '
                        'root_required: A', errors.QUERYPARAM_BAD_VALUE)


class TestNames(ParseHelpers):

    def test_names_exposed(self):
        req = self.parse([('resources', 'VCPU:1'), ('required', 'in:A,B'),
                          ('resources1', 'DISK_GB:1'), ('required1', '!C'),
                          ('root_required', 'D')])
        self.assertEqual({'VCPU', 'DISK_GB'}, req.resource_class_names())
        self.assertEqual({'A', 'B', 'C', 'D'}, req.trait_names())

    def test_unknown_class(self):
        req = self.parse([('resources', 'VCPU:1,CUSTOM_X:1')])
        exc = self.assertRaises(errors.BadRequest, req.validate_names,
                                {'VCPU'}, set())
        self.assertEqual('Invalid resource class in resources parameter: '
                         'No such resource class CUSTOM_X.', exc.detail)

    def test_unknown_traits(self):
        req = self.parse([('resources', 'VCPU:1'), ('required', 'Z,!Y')])
        exc = self.assertRaises(errors.BadRequest, req.validate_names,
                                {'VCPU'}, {'Z'})
        self.assertEqual('No such trait(s): Y.', exc.detail)

    def test_unknown_root_trait(self):
        req = self.parse([('resources', 'VCPU:1'), ('root_required', '!Q')])
        exc = self.assertRaises(errors.BadRequest, req.validate_names,
                                {'VCPU'}, set())
        self.assertEqual('No such trait(s): Q.', exc.detail)

    def test_all_known(self):
        req = self.parse([('resources', 'VCPU:1'), ('required', 'A')])
        self.assertIsNone(req.validate_names({'VCPU'}, {'A'}))


class TestProviderFilters(testtools.TestCase):

    def parse(self, pairs, version=LATEST):
        """What the handler does with a query: check it, then parse it."""
        schemas.validate_query(
            dict(pairs), rp_schema.list_query(microversion.Version(*version)))
        return rg.parse_provider_filters(pairs, version)

    def assert_400(self, pairs, version, text):
        exc = self.assertRaises(errors.BadRequest, self.parse, pairs,
                                version)
        self.assertIn(text, exc.detail)

    def test_gates(self):
        for key, value, version in [('member_of', AGG1, (1, 3)),
                                    ('resources', 'VCPU:1', (1, 4)),
                                    ('in_tree', RP1, (1, 14)),
                                    ('required', 'A', (1, 18))]:
            self.assert_400([(key, value)], (version[0], version[1] - 1),
                            "Additional properties are not allowed ('%s' was "
                            "unexpected)" % key)
            self.parse([(key, value)], version)

    def test_all_filters(self):
        group = self.parse([('name', 'n'), ('resources', 'VCPU:1'),
                            ('required', 'A,!B'), ('member_of', AGG1),
                            ('in_tree', RP1)])
        self.assertEqual('', group.suffix)
        self.assertEqual({'VCPU': 1}, group.resources)
        self.assertEqual((frozenset(['A']),), group.required_traits)
        self.assertEqual(frozenset(['B']), group.forbidden_traits)
        self.assertEqual((frozenset([AGG1]),), group.member_of)
        self.assertEqual(RP1, group.in_tree)

    def test_in_tree_schema_uuid(self):
        self.assert_400([('in_tree', 'nope')], LATEST, "is not a 'uuid'")

    def test_member_of_repeat_gate(self):
        self.assert_400([('member_of', AGG1), ('member_of', AGG2)], (1, 23),
                        'Multiple member_of parameters are not supported')
        group = self.parse([('member_of', AGG1), ('member_of', AGG2)],
                           (1, 24))
        self.assertEqual(2, len(group.member_of))

    def test_required_repeat(self):
        pairs = [('required', 'A'), ('required', 'in:B,C')]
        self.assertEqual((frozenset(['A']), frozenset(['B', 'C'])),
                         self.parse(pairs).required_traits)
        self.assert_400(pairs, (1, 38), 'only supported since microversion')

    def test_resources_last_value(self):
        group = self.parse([('resources', 'VCPU:x'), ('resources', 'VCPU:2')])
        self.assertEqual({'VCPU': 2}, group.resources)

    def test_unknown_names(self):
        group = self.parse([('resources', 'CUSTOM_X:1'), ('required', 'T')])
        exc = self.assertRaises(errors.BadRequest,
                                rg.validate_provider_filter_names, group,
                                {'VCPU'}, {'T'})
        self.assertEqual('Invalid resource class in resources parameter: No '
                         'such resource class CUSTOM_X.', exc.detail)
        group = self.parse([('required', '!T')])
        exc = self.assertRaises(errors.BadRequest,
                                rg.validate_provider_filter_names, group,
                                {'VCPU'}, set())
        self.assertEqual('Invalid trait(s) in "required" parameter: No such '
                         'trait(s): T.', exc.detail)


KEYS = ['resources', 'resources1', 'resources_X', 'required', 'required1',
        'member_of', 'member_of1', 'in_tree', 'in_tree1', 'limit',
        'group_policy', 'root_required', 'same_subtree', 'bogus']
VALUE_PIECES = ['VCPU', ':', '1', '0', '-2', ',', '!', 'in:', ' ', 'x',
                AGG1, RP1, '_X', 'none', 'isolate', '']


class TestParserFuzz(testtools.TestCase):
    """Whatever the query, the parser answers or raises BadRequest."""

    @hypothesis.settings(max_examples=300, deadline=None)
    @hypothesis.given(
        st.lists(st.tuples(st.sampled_from(KEYS),
                           st.lists(st.sampled_from(VALUE_PIECES),
                                    max_size=5).map(''.join)),
                 max_size=6),
        st.sampled_from([(1, 10), (1, 16), (1, 22), (1, 25), (1, 31),
                         (1, 33), (1, 35), (1, 36), (1, 39)]))
    def test_only_bad_request(self, pairs, version):
        try:
            ac_schema.check_query(pairs, version)
            request = rg.parse_candidate_request(pairs, version)
        except errors.BadRequest as exc:
            self.assertEqual(400, exc.status)
            return
        self.assertTrue(request.groups)
        self.assertTrue(any(group.resources for group in request.groups))
        for group in request.groups:
            self.assertTrue(all(n >= 1 for n in group.resources.values()))

    @hypothesis.settings(max_examples=200, deadline=None)
    @hypothesis.given(
        st.lists(st.tuples(st.sampled_from(['resources', 'required',
                                            'member_of', 'in_tree', 'name',
                                            'uuid', 'bogus']),
                           st.lists(st.sampled_from(VALUE_PIECES),
                                    max_size=5).map(''.join)),
                 max_size=5),
        st.sampled_from([(1, 0), (1, 3), (1, 4), (1, 14), (1, 18), (1, 22),
                         (1, 24), (1, 32), (1, 39)]))
    def test_provider_filters_only_bad_request(self, pairs, version):
        try:
            schemas.validate_query(
                dict(pairs),
                rp_schema.list_query(microversion.Version(*version)))
            rg.parse_provider_filters(pairs, version)
        except errors.BadRequest as exc:
            self.assertEqual(400, exc.status)


class TestClassRanks(ParseHelpers):
    """The classes' places in an answer: the query's order, or the
    unsuffixed group's by class id (upstream's tree path)."""

    IDS = {'VCPU': 0, 'MEMORY_MB': 1, 'DISK_GB': 2, 'CUSTOM_X': 10000}

    def ranked(self, rank):
        return sorted(rank, key=rank.get)

    def test_unsuffixed_by_id_suffixed_as_named(self):
        request = self.parse({'resources2': 'CUSTOM_X:1,VCPU:1',
                              'resources': 'DISK_GB:1,MEMORY_MB:1,VCPU:1',
                              'group_policy': 'none'})
        self.assertEqual(['CUSTOM_X', 'VCPU', 'DISK_GB', 'MEMORY_MB'],
                         self.ranked(request.class_rank))
        self.assertEqual(['CUSTOM_X', 'VCPU', 'MEMORY_MB', 'DISK_GB'],
                         self.ranked(request.class_rank_by_id(self.IDS)))

    def test_a_class_without_id_goes_last(self):
        request = self.parse({'resources': 'CUSTOM_Y:1,DISK_GB:1,VCPU:1'})
        self.assertEqual(['VCPU', 'DISK_GB', 'CUSTOM_Y'],
                         self.ranked(request.class_rank_by_id(self.IDS)))

    def test_remembered_per_ids(self):
        request = self.parse({'resources': 'DISK_GB:1,VCPU:1'})
        first = request.class_rank_by_id(self.IDS)
        self.assertIs(first, request.class_rank_by_id(dict(self.IDS)))
        swapped = dict(self.IDS, VCPU=3)
        self.assertEqual(['DISK_GB', 'VCPU'],
                         self.ranked(request.class_rank_by_id(swapped)))
