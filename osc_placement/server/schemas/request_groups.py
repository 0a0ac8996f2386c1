# SPDX-License-Identifier: Apache-2.0
"""Parsing of the resource/trait/aggregate query parameters, per microversion.

Pure functions, no database: ``GET /allocation_candidates`` and ``GET
/resource_providers`` hand their query string here once it passed its
schema, and get typed, immutable objects back, or ``errors.BadRequest``
with upstream's text and code. A query string is a multidict (a list of
pairs in request order, or a dict of lists). Names that need the
database are not checked while parsing: ``validate_names`` checks the
names the parsed objects use against sets the caller supplies.
"""

import dataclasses
import functools
import re
import uuid as uuid_lib

from osc_placement.server import errors
from osc_placement.server import microversion

MISC_SHARES_VIA_AGGREGATE = 'MISC_SHARES_VIA_AGGREGATE'

# Upstream's group suffix patterns: numbers from 1.25, free-form from 1.33.
_NUMERIC_SUFFIX = '[1-9][0-9]*'
_VERBOSE_SUFFIX = '[a-zA-Z0-9_-]{1,64}'
# The form of a limit, in the query schema and here.
LIMIT_PATTERN = '^[1-9][0-9]*$'
# The keys a request group's parameters start with (the suffix follows).
GROUP_PREFIXES = ('resources', 'required', 'member_of', 'in_tree')

_RESOURCES_FORM = (
    'Badly formed resources parameter. Expected resources query string '
    'parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: %s.')


@dataclasses.dataclass(frozen=True)
class RequestGroup:
    """One request group: what a single provider (suffixed group) or one
    tree plus sharing providers (the unsuffixed group) must satisfy.

    ``required_traits`` is a tuple of any-of sets, ANDed together;
    ``member_of`` likewise for aggregates. Forbidden sets are "none of".
    """

    suffix: str = ''
    resources: dict = dataclasses.field(default_factory=dict)
    required_traits: tuple = ()
    forbidden_traits: frozenset = frozenset()
    member_of: tuple = ()
    forbidden_aggs: frozenset = frozenset()
    in_tree: str = None

    @property
    def use_same_provider(self):
        return self.suffix != ''

    def trait_names(self):
        names = set(self.forbidden_traits)
        for any_of in self.required_traits:
            names |= any_of
        return names

    def aggregate_uuids(self):
        uuids = set(self.forbidden_aggs)
        for any_of in self.member_of:
            uuids |= any_of
        return uuids


@dataclasses.dataclass(frozen=True)
class CandidateRequest:
    """A parsed ``GET /allocation_candidates`` request."""

    version: microversion.Version
    groups: tuple  # of RequestGroup, in order of first appearance
    group_policy: str = None
    limit: int = None
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()
    same_subtrees: tuple = ()  # of frozensets of suffixes

    @property
    def nested_aware(self):
        return self.version.supports('nested_candidates')

    @functools.cached_property
    def class_rank(self):
        """{class: its place in an answer's resources}: the order the
        query names the classes in, group after group, which upstream's
        answers keep. Worked out once per request (the handler's memo of
        parsed queries hands the same request out again)."""
        rank = {}
        for group in self.groups:
            for name in group.resources:
                rank.setdefault(name, len(rank))
        return rank

    def class_rank_by_id(self, class_ids):
        """class_rank with the unsuffixed group's classes in class id order
        (``class_ids``: {name: id}), as upstream's tree path lists them; a
        class with no id (in no answer) goes last, other groups as queried.
        Remembered per the ids, which stay while a structure is kept."""
        key = tuple(class_ids.get(name) for name in self.class_rank)
        ranks = self.__dict__.setdefault('_ranks_by_id', {})
        rank = ranks.get(key)
        if rank is None:
            rank = ranks[key] = self._ranked_by_id(class_ids)
        return rank

    def _ranked_by_id(self, class_ids):
        rank = {}
        for group in self.groups:
            names = list(group.resources)
            if not group.use_same_provider:
                names.sort(key=lambda name: (name not in class_ids,
                                             class_ids.get(name, 0)))
            for name in names:
                rank.setdefault(name, len(rank))
        return rank

    # The candidate engine's memos (candidates/memo.py, viable.py) are
    # keyed by these, worked out once per request: the handler's memo of
    # parsed queries hands the same request out again.
    @functools.cached_property
    def shape_key(self):
        """What the viable anchors depend on: the groups without their
        amounts."""
        return (self.group_policy, tuple(
            (group.suffix, tuple(sorted(group.resources)),
             group.required_traits, group.forbidden_traits, group.member_of,
             group.forbidden_aggs, group.in_tree)
            for group in self.groups))

    @functools.cached_property
    def walk_key(self):
        """What the walks find depends on: everything but the limit."""
        return (
            self.shape_key, self.version, self.root_required,
            self.root_forbidden, self.same_subtrees,
            # In the query's order, which the candidates' bodies keep.
            tuple(tuple(group.resources.items()) for group in self.groups))

    @functools.cached_property
    def answer_key(self):
        """Everything the answer depends on: equal keys, equal answers."""
        return self.walk_key, self.limit

    @functools.cached_property
    def suffix_rank(self):
        """{suffix: its place in an answer's mappings}: the order the
        query names the groups in, which upstream's answers keep."""
        return {group.suffix: place
                for place, group in enumerate(self.groups)}

    def group(self, suffix):
        for group in self.groups:
            if group.suffix == suffix:
                return group
        raise KeyError(suffix)

    def resource_class_names(self):
        names = set()
        for group in self.groups:
            names |= set(group.resources)
        return names

    def trait_names(self):
        names = set(self.root_required) | set(self.root_forbidden)
        for group in self.groups:
            names |= group.trait_names()
        return names

    def validate_names(self, known_classes, known_traits):
        """Raise upstream's 400 for the first unknown class or trait.

        Upstream resolves root_required first, then each group in order:
        its classes, its any-of trait sets, its forbidden traits.
        """
        _check_traits_exist([self.root_required, self.root_forbidden],
                            known_traits)
        for group in self.groups:
            _check_classes_exist(group.resources, known_classes,
                                 'Invalid resource class in resources '
                                 'parameter: ')
            _check_traits_exist(
                list(group.required_traits) + [group.forbidden_traits],
                known_traits)


def _check_classes_exist(resources, known_classes, prefix):
    for name in resources:
        if name not in known_classes:
            raise errors.BadRequest(
                '%sNo such resource class %s.' % (prefix, name))


def _check_traits_exist(trait_sets, known_traits, prefix=''):
    """Name the first unknown trait only, as upstream does: it looks the
    sets up in order and stops at the first name its cache lacks. Which
    name of one set comes first is not defined upstream (it iterates a
    Python set); ours takes the smallest, so the answer is stable."""
    # ``known_traits`` only needs ``in``: a set, or a DB-backed lookup.
    for names in trait_sets:
        missing = sorted(name for name in names if name not in known_traits)
        if missing:
            raise errors.BadRequest(
                '%sNo such trait(s): %s.' % (prefix, missing[0]))


# --------------------------------------------------------------------------
# Query string plumbing


def as_pairs(query):
    """Return the multidict ``query`` as a list of (key, value) pairs."""
    if isinstance(query, dict):
        pairs = []
        for key, values in query.items():
            if isinstance(values, str):
                values = [values]
            pairs.extend((key, value) for value in values)
        return pairs
    return list(query)


def _values(pairs, key):
    return [value for k, value in pairs if k == key]


def _last_values(pairs):
    """The last value of each key: ``dict(request.GET)``."""
    return dict(pairs)


def is_uuid_like(value):
    """oslo.utils' lenient UUID test: dashless, braces, urn: all accepted."""
    try:
        formatted = value.replace('urn:', '').replace('uuid:', '')
        formatted = formatted.strip('{}').replace('-', '').lower()
        return str(uuid_lib.UUID(value)).replace('-', '') == formatted
    except (TypeError, ValueError, AttributeError):
        return False


# --------------------------------------------------------------------------
# Single parameter values


def parse_resources(value):
    """``VCPU:2,MEMORY_MB:1024`` -> {'VCPU': 2, 'MEMORY_MB': 1024}."""
    if value.strip() == '':
        raise errors.BadRequest(_RESOURCES_FORM % 'empty string')
    resources = {}
    for item in value.split(','):
        parts = item.split(':')
        if len(parts) != 2:
            raise errors.BadRequest(_RESOURCES_FORM % item)
        name, amount = parts
        resources[name] = _parse_amount(name, amount)
    return resources


def _parse_amount(name, amount):
    try:
        number = int(amount)
    except ValueError:
        raise errors.BadRequest(
            'Requested resource %s expected positive integer amount. '
            'Got: %s.' % (name, amount))
    if number < 1:
        raise errors.BadRequest(
            'Requested resource %s requires amount >= 1. Got: %d.'
            % (name, number))
    return number


def parse_traits(value, allow_forbidden, allow_any):
    """One ``required`` value -> (list of any-of sets, forbidden set)."""
    if value.startswith('in:'):
        return _parse_any_traits(value, allow_any)
    items = [item.strip() for item in value.split(',')]
    # Upstream strips every leading '!' ('!!!FOO' is FOO forbidden), a
    # known bug kept for compatibility.
    forbidden = {item.lstrip('!') for item in items if item.startswith('!')}
    if not all(items) or not all(forbidden):
        form = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if allow_forbidden
                else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: %s. Got an empty trait in: %s"
            % (form, value))
    if forbidden and not allow_forbidden:
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s" % value)
    required = [frozenset([item]) for item in items
                if not item.startswith('!')]
    return required, forbidden


def _parse_any_traits(value, allow_any):
    if not allow_any:
        raise errors.BadRequest(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
            "microversion 1.39. Got: %s" % value)
    any_of = {item.strip() for item in value[3:].split(',')}
    if not all(any_of):
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty "
            "trait in: %s" % value)
    if any(item.startswith('!') for item in any_of):
        raise errors.BadRequest(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden "
            "traits. Got: %s" % value)
    return [frozenset(any_of)], set()


def parse_required_values(values, version):
    """All ``required<S>`` values of one group -> (any-of sets, forbidden).

    Before 1.39 only the last value counts; from 1.39 all are ANDed.
    """
    allow_any = version.supports('any_of_traits')
    if not allow_any:
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        sets, names = parse_traits(
            value, version.supports('forbidden_traits'), allow_any)
        required += sets
        forbidden |= names
    return tuple(required), frozenset(forbidden)


def parse_member_of_value(value):
    """One ``member_of`` value -> (any-of set, forbidden set)."""
    if ',' in value and not value.startswith(('in:', '!in:')):
        raise errors.BadRequest(
            "Multiple values for 'member_of' must be prefixed with the 'in:' "
            "or '!in:' keyword using the valid microversion. Got: %s" % value)
    required, forbidden = set(), set()
    if value.startswith('!in:'):
        forbidden = set(value[4:].split(','))
    elif value.startswith('!'):
        forbidden = {value[1:]}
    elif value.startswith('in:'):
        required = set(value[3:].split(','))
    else:
        required = {value}
    for agg in required | forbidden:
        if not is_uuid_like(agg):
            raise errors.BadRequest(
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: %s" % agg)
    return required, forbidden


def parse_member_of_values(values, version, suffix=''):
    """All ``member_of<S>`` values -> (tuple of any-of sets, forbidden)."""
    if not version.supports('repeated_member_of') and len(values) > 1:
        raise errors.BadRequest(
            'Multiple member_of%s parameters are not supported' % suffix)
    member_of, forbidden = [], set()
    for value in values:
        required, excluded = parse_member_of_value(value)
        if required:
            member_of.append(frozenset(required))
        if excluded:
            if not version.supports('forbidden_aggregates'):
                raise errors.BadRequest(
                    'Forbidden member_of%s parameters are not supported in '
                    'the specified microversion' % suffix)
            forbidden |= excluded
    return tuple(member_of), frozenset(forbidden)


def parse_in_tree(value):
    stripped = value.strip()
    if not is_uuid_like(stripped):
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'in_tree' parameter "
            "to be a format of uuid. Got: %s" % value)
    return stripped


# --------------------------------------------------------------------------
# GET /allocation_candidates


def parse_candidate_request(query, version):
    """Parse and check a ``GET /allocation_candidates`` query string
    that passed its schema (schemas/allocation_candidate.check_query).

    Mirrors upstream's order: request-wide parameters, request groups
    (with orphan / resourceless checks), group_policy.
    """
    # A plain (major, minor) pair from a test or tool asks by name too.
    version = microversion.Version(*version)
    pairs = as_pairs(query)
    wide = _parse_request_wide(pairs, version)
    groups = _parse_groups(pairs, version)
    if version.supports('resourceless_groups'):
        _check_resourceless_groups(groups, wide['same_subtrees'])
    else:
        _check_orphans(groups)
    if version.supports('forbidden_traits'):
        _check_conflicting_traits(groups)
    _check_group_policy(groups, wide['group_policy'])
    return CandidateRequest(version=version, groups=tuple(groups), **wide)


def _parse_request_wide(pairs, version):
    limits = _values(pairs, 'limit')
    policies = _values(pairs, 'group_policy')
    required, forbidden = _parse_root_required(
        _values(pairs, 'root_required'))
    return {
        # Upstream uses the first value of a repeated limit/group_policy.
        'limit': _parse_limit(limits) if limits else None,
        'group_policy': policies[0] if policies else None,
        'root_required': required,
        'root_forbidden': forbidden,
        'same_subtrees': _parse_same_subtrees(
            _values(pairs, 'same_subtree')),
    }


def _parse_limit(values):
    """Upstream's limit: the first of ``values``. The query schema checked
    the last one, so a single limit, the usual case, is checked once; a
    first one unlike it is checked here, with the schema's pattern and
    its 400 text (upstream fails such a limit with a 500)."""
    first = values[0]
    if first != values[-1] and not re.search(LIMIT_PATTERN, first):
        raise errors.BadRequest(
            'Invalid query string parameters: %r does not match %r'
            % (first, LIMIT_PATTERN))
    return int(first)


def _parse_root_required(values):
    if not values:
        return frozenset(), frozenset()
    if len(values) > 1:
        raise errors.BadRequest(
            "Query parameter 'root_required' may be specified only once.",
            code=errors.QUERYPARAM_DUPLICATE_KEY)
    # root_required never takes the 1.39 any-of form.
    sets, forbidden = parse_traits(values[0], allow_forbidden=True,
                                   allow_any=False)
    required = {name for any_of in sets for name in any_of}
    conflicts = required & forbidden
    if conflicts:
        raise errors.BadRequest(
            'Conflicting required and forbidden traits found in '
            'root_required: %s' % ', '.join(sorted(conflicts)),
            code=errors.QUERYPARAM_BAD_VALUE)
    return frozenset(required), frozenset(forbidden)


def _parse_same_subtrees(values):
    subtrees = []
    for value in values:
        suffixes = frozenset(item.strip() for item in value.split(','))
        if '' in suffixes:
            raise errors.BadRequest(
                'Empty string (unsuffixed group) can not be specified in '
                '`same_subtree` ', code=errors.QUERYPARAM_BAD_VALUE)
        subtrees.append(suffixes)
    return tuple(subtrees)


def group_suffix(version):
    """The pattern of a group suffix at ``version``."""
    return (_VERBOSE_SUFFIX if version.supports('named_groups')
            else _NUMERIC_SUFFIX)


def _group_key_regex(version):
    prefixes = '|'.join(GROUP_PREFIXES)
    return re.compile('^(%s)(%s)?$' % (prefixes, group_suffix(version)))


def _parse_groups(pairs, version):
    """Walk the pairs in order, as upstream does, building groups."""
    key_regex = _group_key_regex(version)
    fields = {}  # suffix -> dict of RequestGroup fields, insertion ordered
    for key, value in pairs:
        match = key_regex.match(key)
        if not match:
            continue
        prefix, suffix = match.group(1), match.group(2) or ''
        group = fields.setdefault(suffix, {'suffix': suffix})
        _parse_group_param(group, prefix, key, value, pairs, version)
    return [RequestGroup(**group) for group in fields.values()]


def _parse_group_param(group, prefix, key, value, pairs, version):
    suffix = group['suffix']
    if prefix == 'resources':
        # Every value is parsed (errors surface), the last one wins.
        group['resources'] = parse_resources(value)
    elif prefix == 'required':
        (group['required_traits'],
         group['forbidden_traits']) = parse_required_values(
            _values(pairs, key), version)
    elif prefix == 'member_of':
        group['member_of'], group['forbidden_aggs'] = parse_member_of_values(
            _values(pairs, key), version, suffix)
    else:
        group['in_tree'] = parse_in_tree(value)


def _check_orphans(groups):
    """Before 1.36 every group must request resources."""
    orphans = ['required%s' % g.suffix for g in groups
               if g.required_traits and not g.resources]
    if orphans:
        raise errors.BadRequest(
            'All traits parameters must be associated with resources.  '
            'Found the following orphaned traits keys: %s'
            % ', '.join(orphans))
    orphans = ['member_of%s' % g.suffix for g in groups
               if not g.resources and (g.member_of or g.forbidden_aggs)]
    if orphans:
        raise errors.BadRequest(
            'All member_of parameters must be associated with resources. '
            'Found the following orphaned member_of keys: %s'
            % ', '.join(orphans))
    if not all(g.resources for g in groups):
        raise errors.BadRequest('All request groups must specify resources.')
    if not groups:
        raise errors.BadRequest(
            'At least one request group (`resources` or `resources{$S}`) '
            'is required.')


def _check_resourceless_groups(groups, same_subtrees):
    """From 1.36 a suffixed group may be resourceless if same_subtree
    names it; at least one group must still request resources."""
    resourceless = [g.suffix for g in groups if not g.resources]
    if len(resourceless) == len(groups):
        raise errors.BadRequest(
            'There must be at least one resources or resources[$S] '
            'parameter.', code=errors.QUERYPARAM_MISSING_VALUE)
    named = set().union(*same_subtrees)
    bad = sorted(s for s in resourceless if s not in named)
    if bad:
        raise errors.BadRequest(
            'Resourceless suffixed group request should be specified in '
            '`same_subtree` query param: bad group(s) - %s.' % bad,
            code=errors.QUERYPARAM_BAD_VALUE)
    suffixes = [g.suffix for g in groups]
    unknown = sorted(s for s in named if s not in suffixes)
    if unknown:
        raise errors.BadRequest(
            'Real suffixes should be specified in `same_subtree`: '
            '%s not found in %s.' % (unknown, suffixes),
            code=errors.QUERYPARAM_BAD_VALUE)


def _check_conflicting_traits(groups):
    """An any-of set entirely forbidden in the same group can never match."""
    conflicts = []
    for group in groups:
        for any_of in group.required_traits:
            if any_of <= group.forbidden_traits:
                conflicts.append('required%s: (%s)' % (
                    group.suffix, ', '.join(sorted(any_of))))
    if conflicts:
        raise errors.BadRequest(
            'Conflicting required and forbidden traits found in the '
            'following traits keys: %s' % ', '.join(sorted(conflicts)))


def _check_group_policy(groups, group_policy):
    suffixed = [g for g in groups if g.use_same_provider]
    if group_policy is None and len(suffixed) > 1:
        raise errors.BadRequest(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')


# --------------------------------------------------------------------------
# GET /resource_providers


def parse_provider_filters(query, version):
    """The resources/required/member_of/in_tree filters of
    ``GET /resource_providers`` as an unsuffixed RequestGroup.

    The query passed its schema (schemas/resource_provider.list_query:
    a filter used below its microversion is a 400 there). The filters are
    parsed the way upstream does: the last value of each key, except
    member_of (all values, 1.24) and required (all values from 1.39).
    ``name`` and ``uuid`` are left to the caller (plain equality).
    """
    # A plain (major, minor) pair from a test or tool asks by name too.
    version = microversion.Version(*version)
    pairs = as_pairs(query)
    last = _last_values(pairs)
    group = {}
    if 'member_of' in last:
        group['member_of'], group['forbidden_aggs'] = parse_member_of_values(
            _values(pairs, 'member_of'), version)
    if 'in_tree' in last:
        group['in_tree'] = last['in_tree']
    if 'resources' in last:
        group['resources'] = parse_resources(last['resources'])
    if 'required' in last:
        group['required_traits'], group['forbidden_traits'] = (
            parse_required_values(_values(pairs, 'required'), version))
    return RequestGroup(**group)


def validate_provider_filter_names(group, known_classes, known_traits):
    """The 400s of ``GET /resource_providers`` for unknown names."""
    _check_classes_exist(group.resources, known_classes,
                         'Invalid resource class in resources parameter: ')
    _check_traits_exist(
        list(group.required_traits) + [group.forbidden_traits], known_traits,
        prefix='Invalid trait(s) in "required" parameter: ')
