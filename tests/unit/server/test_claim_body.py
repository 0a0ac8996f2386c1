# SPDX-License-Identifier: Apache-2.0
"""The claim body's direct check (schemas/allocation.PUT_DIRECT) against
the jsonschema schema it stands in for.

The direct check may refuse what the schema accepts (jsonschema then
decides, as before), never the reverse: for every body generated here --
Nova's claims and near-misses broken in one to three places -- and every
version from consumer generations on, a body the direct check accepts
must pass the version's schema. Nova's plain claims must pass the direct
check too, or it would never be used.
"""

import copy
from unittest import mock

import hypothesis
from hypothesis import strategies as st
import orjson
import testtools

from osc_placement.server import errors
from osc_placement.server import http_api
from osc_placement.server import microversion
from osc_placement.server import schemas
from osc_placement.server.schemas import allocation

CHECKED = [version for version in microversion.KNOWN
           if version.supports('consumer_generations')]
UNCHECKED = [version for version in microversion.KNOWN
             if not version.supports('consumer_generations')]
PROVIDER = '5b3a8a8e-2d3f-4b8e-9d55-2b6a1f4d0c01'
# Drawing a claim is slow on a busy machine, which is no fault of the
# claim; nothing else is suppressed.
SETTINGS = dict(deadline=None,
                suppress_health_check=[hypothesis.HealthCheck.too_slow])


def direct_check(version):
    return schemas.for_version(allocation.PUT_DIRECT, version)


def schema_accepts(body, version):
    """What the server's jsonschema run says of ``body``."""
    try:
        http_api.validate(body, schemas.for_version(allocation.PUT, version),
                          '%s')
    except errors.BadRequest:
        return False
    return True


def takes_consumer_type(version):
    return version.supports('consumer_types')


# -- Nova's claims -----------------------------------------------------------

_CLASSES = st.one_of(
    st.sampled_from(['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCI_DEVICE', 'PGPU',
                     'SRIOV_NET_VF', 'NET_BW_EGR_KILOBIT_PER_SEC']),
    st.from_regex(r'\ACUSTOM_[A-Z0-9_]{1,40}\Z'))
_PROVIDERS = st.one_of(st.uuids().map(str),
                       st.uuids().map(lambda uuid: str(uuid).upper()))
_IDS = st.one_of(st.uuids().map(str), st.uuids().map(lambda u: u.hex),
                 st.text(min_size=1, max_size=255))
_CONSUMER_TYPES = st.one_of(st.sampled_from(['INSTANCE', 'MIGRATION']),
                            st.from_regex(r'\A[A-Z0-9_]{1,255}\Z'))


@st.composite
def nova_claims(draw):
    """A claim as Nova's scheduler sends it: the candidate's allocations
    (none: the consumer's are removed), its project and user, the
    consumer generation, and the consumer type at 1.38 and later (drawn
    always; the tests pick the versions it fits)."""
    resources = st.dictionaries(_CLASSES, st.integers(1, 2 ** 40),
                                min_size=1, max_size=5)
    entry = st.one_of(
        st.fixed_dictionaries({'resources': resources}),
        st.fixed_dictionaries({'resources': resources,
                               'generation': st.integers()}))
    body = {
        'allocations': draw(st.dictionaries(_PROVIDERS, entry, max_size=3)),
        'project_id': draw(_IDS),
        'user_id': draw(_IDS),
        'consumer_generation': draw(st.one_of(st.none(), st.integers())),
    }
    if draw(st.booleans()):
        body['consumer_type'] = draw(_CONSUMER_TYPES)
    return body


# -- near-misses -------------------------------------------------------------

# Values of every wrong kind, and right kinds at and past each limit.
EDGE_VALUES = [
    True, False, 0, -1, 1, 2, 2 ** 31, 2 ** 63, 1.0, 2.0, 1.5, -0.0, None,
    '', 'x', 'x' * 255, 'x' * 256, 'A' * 255, 'A' * 256, 'VCPU', 'vcpu',
    'VCPU\n', ' VCPU', 'VCPU-1', PROVIDER, [], [1], ['VCPU'], {}, {'x': 1},
    {'VCPU': 1}, {'VCPU': 0}, {'VCPU': True}, {'resources': {}},
    {'resources': {'VCPU': 1}}, {'resources': {'VCPU': 1}, 'x': 1},
    {'resources': {'VCPU': 1}, 'generation': None},
    {PROVIDER: {'resources': {'VCPU': 1}}}, {'a': [PROVIDER]}]
# Keys that belong somewhere in a claim, and keys that belong nowhere.
EDGE_KEYS = [
    'allocations', 'project_id', 'user_id', 'consumer_generation',
    'consumer_type', 'mappings', 'generation', 'resources',
    'resource_provider', 'VCPU', 'vcpu', 'VCPU\n', 'VCPU ', '', 'CUSTOM_X',
    PROVIDER, PROVIDER.upper(), PROVIDER + '\n', PROVIDER.replace('-', ''),
    PROVIDER[:-1], PROVIDER + '0', '-' * 36, 'x' * 36]

_ODD_VALUES = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=300),
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(),
                           st.text(max_size=5)),
                 lambda inner: st.one_of(
                     st.lists(inner, max_size=3),
                     st.dictionaries(st.text(max_size=5), inner,
                                     max_size=3)),
                 max_leaves=6),
).map(copy.deepcopy)  # the listed values are shared; bodies change theirs
_ODD_KEYS = st.one_of(st.sampled_from(EDGE_KEYS), st.text(max_size=40))


def _dicts(value, path=()):
    """The path of keys to each dict in ``value``, ``value`` included."""
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _dicts(item, path + (key,))


def _at(body, path):
    for key in path:
        body = body[key]
    return body


def _entries(body):
    """(dict, key) for every key of every dict in ``body``: a claim's
    amounts are most of its values, so most changes land on one."""
    places = [_at(body, path) for path in _dicts(body)]
    return [(place, key) for place in places for key in place]


def _replace(data, body):
    place, key = data.draw(st.sampled_from(_entries(body)))
    place[key] = data.draw(_ODD_VALUES)


def _remove(data, body):
    place, key = data.draw(st.sampled_from(_entries(body)))
    del place[key]


def _rename(data, body):
    place, key = data.draw(st.sampled_from(_entries(body)))
    place[data.draw(_ODD_KEYS)] = place.pop(key)


def _add(data, body):
    place = _at(body, data.draw(st.sampled_from(list(_dicts(body)))))
    place[data.draw(_ODD_KEYS)] = data.draw(st.one_of(
        _ODD_VALUES, st.just(copy.deepcopy(body))))


def _changed(body, path, change, *args):
    body = copy.deepcopy(body)
    change(_at(body, path), *args)
    return body


def _set(place, key, value):
    place[key] = copy.deepcopy(value)


def _pop(place, key):
    del place[key]


def _move(place, key, new_key):
    place[new_key] = place.pop(key)


def single_changes(body):
    """Every copy of ``body`` changed in one place: each key removed,
    renamed to each edge key or given each edge value, and each edge key
    added to each dict, with a value of its own kind or not."""
    for path in list(_dicts(body)):
        place = _at(body, path)
        for key in place:
            yield _changed(body, path, _pop, key)
            for value in EDGE_VALUES:
                yield _changed(body, path, _set, key, value)
            for new_key in EDGE_KEYS:
                yield _changed(body, path, _move, key, new_key)
        for new_key in EDGE_KEYS:
            for value in [1, {}] + list(place.values())[:1]:
                yield _changed(body, path, _set, new_key, value)


def break_body(data, body):
    """A copy of ``body`` changed in one to three places, anywhere in
    its depth."""
    body = copy.deepcopy(body)
    for _ in range(data.draw(st.integers(1, 3))):
        mutations = [_replace, _remove, _rename, _add] if body else [_add]
        data.draw(st.sampled_from(mutations))(data, body)
    return body


class TestDirectCheck(testtools.TestCase):

    def assert_no_wider_than_schema(self, body):
        for version in CHECKED:
            if direct_check(version)(body):
                self.assertTrue(
                    schema_accepts(body, version),
                    'direct check accepts at %s what the schema refuses: '
                    '%r' % (version, body))

    @hypothesis.settings(max_examples=60, **SETTINGS)
    @hypothesis.given(nova_claims())
    def test_accepts_nova_claims(self, body):
        for version in CHECKED:
            fits = takes_consumer_type(version) == ('consumer_type' in body)
            self.assertEqual(fits, direct_check(version)(body), version)
            self.assertEqual(fits, schema_accepts(body, version), version)

    @hypothesis.settings(max_examples=20, **SETTINGS)
    @hypothesis.given(nova_claims())
    def test_every_single_change_refused_or_valid(self, body):
        for changed in single_changes(body):
            self.assert_no_wider_than_schema(changed)

    @hypothesis.settings(max_examples=200, **SETTINGS)
    @hypothesis.given(nova_claims(), st.data())
    def test_accepts_only_what_the_schema_accepts(self, body, data):
        self.assert_no_wider_than_schema(break_body(data, body))

    def test_near_misses_written_out(self):
        # The limits of each field, one by one, on a claim both accept.
        base = {'allocations': {PROVIDER: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None}
        changes = [
            ('project_id', ''), ('project_id', 'x' * 256),
            ('project_id', 'x' * 255), ('user_id', 7), ('user_id', None),
            ('consumer_generation', True), ('consumer_generation', 1.0),
            ('consumer_generation', -1), ('consumer_generation', '1'),
            ('consumer_type', 'INSTANCE'), ('consumer_type', ''),
            ('consumer_type', 'x' * 256), ('consumer_type', 'instance'),
            ('consumer_type', 'A' * 256), ('consumer_type', 'INSTANCE\n'),
            ('mappings', {'': [PROVIDER]}), ('allocations', {}),
            ('allocations', []), ('allocations', {PROVIDER: {}}),
            ('allocations', {PROVIDER[:-1]: {'resources': {'VCPU': 1}}}),
            ('allocations', {PROVIDER + '\n': {'resources': {'VCPU': 1}}}),
            ('allocations', {PROVIDER: {'resources': {}}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU': 0}}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU': -1}}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU': True}}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU': 2.0}}}),
            ('allocations', {PROVIDER: {'resources': {'vcpu': 1}}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU\n': 1}}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU': 1},
                                        'generation': False}}),
            ('allocations', {PROVIDER: {'resources': {'VCPU': 1},
                                        'extra': 1}}),
            ('extra', 1),
        ]
        for key, value in changes:
            body = dict(base, **{key: value})
            self.assert_no_wider_than_schema(body)
        for version in CHECKED:
            self.assertTrue(direct_check(version)(
                dict(base, consumer_type='INSTANCE')
                if takes_consumer_type(version) else base))

    def test_none_before_consumer_generations(self):
        for version in UNCHECKED:
            self.assertIsNone(direct_check(version), version)


class TestJsonBody(testtools.TestCase):
    """Request.json_body skips jsonschema only for what the check takes."""

    CLAIM = {'allocations': {PROVIDER: {'resources': {'VCPU': 1}}},
             'project_id': 'p', 'user_id': 'u', 'consumer_generation': 3}

    def json_body(self, body):
        version = microversion.Version(1, 28)
        req = http_api.Request.blank('/', method='PUT',
                                     body=orjson.dumps(body))
        return req.json_body(schemas.for_version(allocation.PUT, version),
                             direct_check=direct_check(version))

    def test_accepted_claim_skips_jsonschema(self):
        with mock.patch.object(http_api, 'validate') as validate:
            self.assertEqual(self.CLAIM, self.json_body(self.CLAIM))
        validate.assert_not_called()

    def test_other_body_goes_to_jsonschema(self):
        body = dict(self.CLAIM, consumer_generation=True)
        exc = self.assertRaises(errors.BadRequest, self.json_body, body)
        self.assertIn("True is not of type 'integer', 'null'", exc.detail)
