# SPDX-License-Identifier: Apache-2.0
"""Placement microversions as the client knows them.

``FEATURES`` is the client's one microversion table: the features every
supported microversion brought, by name, each with its microversion and
what it is. The supported microversions are the ones the table names,
every one from ``MIN_VERSION`` to ``MAX_VERSION``. Commands
ask the table by name: ``since`` for a feature's microversion,
``supports`` for a version that has it, ``CheckerMixin.require_feature`` to
refuse with upstream osc-placement's text (a ``ValueError``, which cliff
prints as one line before exiting 1), ``available`` for the columns a
version shows, and ``render`` for help texts that name a version.
"""

import collections
import functools
import operator
import re

from osc_placement import library_seams

Feature = collections.namedtuple('Feature', 'microversion what')

# Named client features, oldest first, and what each is as a client user
# sees it. Some microversions bring several features; every microversion
# the client supports has at least one row, so this is also the list of
# supported microversions. Nothing else in the client writes a microversion
# down: it names the feature instead.
FEATURES = {
    'base': Feature(
        '1.0', 'resource providers, inventories, usages, allocations'),
    'aggregates': Feature('1.1', 'provider aggregates'),
    'resource_classes': Feature('1.2', 'custom resource classes'),
    'member_of': Feature('1.3', 'member_of filter for provider lists'),
    'resources_filter': Feature('1.4', 'resources filter for provider lists'),
    'delete_all_inventories': Feature(
        '1.5', 'delete all inventories of a provider'),
    'traits': Feature('1.6', 'traits'),
    'idempotent_resource_class': Feature(
        '1.7', 'idempotent resource class create (PUT)'),
    'consumer_project_user': Feature(
        '1.8', 'project and user required on allocations'),
    'project_usages': Feature('1.9', 'usages per project and user'),
    'allocation_candidates': Feature('1.10', 'allocation candidates'),
    'provider_allocations_link': Feature(
        '1.11', 'allocations link in providers'),
    'allocations_dict': Feature(
        '1.12', 'allocations as a dict keyed by provider'),
    'consumer_details': Feature(
        '1.12', "a consumer's allocations name its project and user"),
    'several_consumers': Feature(
        '1.13', 'allocations for several consumers at once'),
    'nested_providers': Feature('1.14', 'nested providers (parent and root)'),
    'cache_headers': Feature(
        '1.15', 'last-modified and cache-control headers'),
    'candidate_limit': Feature('1.16', 'limit on allocation candidates'),
    'candidate_required': Feature(
        '1.17', 'required traits on allocation candidates'),
    'summary_traits': Feature('1.17', 'traits in provider summaries'),
    'provider_required': Feature(
        '1.18', 'required traits on provider lists'),
    'aggregate_generation': Feature(
        '1.19', 'aggregates carry the provider generation'),
    'create_returns_provider': Feature(
        '1.20', 'provider create returns the provider'),
    'candidate_member_of': Feature(
        '1.21', 'member_of on allocation candidates'),
    'forbidden_traits': Feature('1.22', 'forbidden traits'),
    'error_codes': Feature('1.23', 'error codes'),
    'repeated_member_of': Feature('1.24', 'repeated member_of'),
    'granular_groups': Feature('1.25', 'granular request groups'),
    'reserved_equals_total': Feature('1.26', 'reserved may equal total'),
    'all_classes_in_summaries': Feature(
        '1.27', 'all classes in provider summaries'),
    'consumer_generations': Feature('1.28', 'consumer generations'),
    'nested_candidates': Feature('1.29', 'nested allocation candidates'),
    'reshaper': Feature('1.30', 'reshaper'),
    'candidate_in_tree': Feature(
        '1.31', 'in_tree on allocation candidates'),
    'forbidden_aggregates': Feature('1.32', 'forbidden aggregates'),
    'named_groups': Feature('1.33', 'string request group suffixes'),
    'candidate_mappings': Feature(
        '1.34', 'request group mappings in candidates'),
    'root_required': Feature(
        '1.35', 'root_required on allocation candidates'),
    'same_subtree': Feature('1.36', 'same_subtree on allocation candidates'),
    'resourceless_groups': Feature(
        '1.36', 'request groups without resources (with same_subtree)'),
    'reparenting': Feature('1.37', 're-parenting and un-parenting providers'),
    'consumer_types': Feature('1.38', 'consumer types'),
    'any_of_traits': Feature('1.39', 'any-of traits (in:) in required'),
}

_VERSION_RE = re.compile(r'^(\d)\.(\d+)$')


@functools.total_ordering
class _Version:
    """A parsed ``X.Y`` microversion that compares as a tuple."""

    def __init__(self, text):
        match = _VERSION_RE.match(str(text).strip())
        if not match:
            raise ValueError('invalid version number %s' % text)
        self.parts = (int(match.group(1)), int(match.group(2)))

    def __eq__(self, other):
        return self.parts == _as_version(other).parts

    def __lt__(self, other):
        return self.parts < _as_version(other).parts

    def __hash__(self):
        return hash(self.parts)

    def __str__(self):
        return '%d.%d' % self.parts


def _as_version(value):
    """A ``_Version`` of an ``X.Y`` string or a ``(major, minor)`` tuple
    (``osc_placement.explain`` keeps the version of a request as one)."""
    if isinstance(value, _Version):
        return value
    if isinstance(value, tuple):
        return _Version('%d.%d' % value)
    return _Version(value)


def parse(text):
    """Return the normalised ``X.Y`` string, or raise ValueError."""
    return str(_Version(text))


def as_tuple(ver):
    """``(major, minor)`` of a microversion, for rules that take tuples."""
    return _as_version(ver).parts


def at_least(ver, first):
    """True when microversion ``ver`` is ``first`` or newer."""
    return _as_version(ver) >= _as_version(first)


def lowest(*versions):
    """The oldest of some ``X.Y`` versions, compared numerically."""
    return min(versions, key=_as_version)


# The microversions the table names, oldest first.
SUPPORTED_MICROVERSIONS = tuple(sorted(
    {feature.microversion for feature in FEATURES.values()},
    key=_as_version))
# '1' asks the client to negotiate the highest version both sides speak.
NEGOTIATE_VERSIONS = ('1',)
SUPPORTED_VERSIONS = NEGOTIATE_VERSIONS + SUPPORTED_MICROVERSIONS
MIN_VERSION = SUPPORTED_MICROVERSIONS[0]
MAX_VERSION = SUPPORTED_MICROVERSIONS[-1]
# Upstream's name for the negotiation cap; with no gaps it is the maximum.
MAX_VERSION_NO_GAP = MAX_VERSION


def since(feature):
    """The microversion that brought ``feature`` (a name in FEATURES)."""
    return FEATURES[feature].microversion


def before(feature):
    """The newest microversion without ``feature``."""
    index = SUPPORTED_MICROVERSIONS.index(since(feature))
    if index == 0:
        raise ValueError('every microversion has %s' % feature)
    return SUPPORTED_MICROVERSIONS[index - 1]


def supports(ver, feature):
    """True when microversion ``ver`` has ``feature``."""
    return at_least(ver, since(feature))


def available(table, ver):
    """The names in ``table`` that microversion ``ver`` has.

    ``table`` is a sequence of ``(name, feature)`` pairs, e.g. a command's
    columns and the feature that brought each; order is kept.
    """
    return tuple(name for name, feature in table if supports(ver, feature))


class _Since(str):
    """A feature's microversion as a template field; ``.before`` is the
    newest microversion without the feature."""

    def __new__(cls, feature):
        field = super().__new__(cls, since(feature))
        field.feature = feature
        return field

    @property
    def before(self):
        return before(self.feature)


class _SinceByName(dict):
    def __missing__(self, feature):
        if feature not in FEATURES:
            raise KeyError('no feature %r in version.FEATURES (a literal '
                           'brace is written {{ or }})' % feature)
        return _Since(feature)


def render(template):
    """``template`` with every ``{feature}`` field replaced by the
    microversion that brought that feature, and every
    ``{feature.before}`` by the newest microversion without it.

    This is how help texts and messages that name a version are written:
    ``render('needs {traits}')`` names the microversion of traits. An
    unknown name raises KeyError; texts are rendered when their module is
    imported or their parser is built, so a misspelt name fails every test
    that gets that far.
    """
    return template.format_map(_SinceByName())


# Upstream osc-placement negotiates at most nested allocation candidates.
# With consumer types allocations need a consumer type and allocation and
# usage output gains consumer types, so a script written for upstream (no
# --consumer-type, parsing -f value columns) would break if a negotiated
# version with them changed those commands. Those commands therefore run at
# most at this version when negotiating, unless the user asks for a
# consumer-type feature; an explicit version is always honoured.
COMPATIBLE_NEGOTIATION_CEILING = before('consumer_types')


def is_supported(text):
    """True for '1' (negotiate) and every microversion in the table."""
    if text in NEGOTIATE_VERSIONS:
        return True
    try:
        return parse(text) in SUPPORTED_MICROVERSIONS
    except ValueError:
        return False


def unsupported_message(text):
    return ("Unsupported placement API version '%s': use 1 to negotiate, "
            "or a microversion from %s to %s"
            % (text, MIN_VERSION, MAX_VERSION))


def _predicate(op, description):
    def factory(bound):
        def check(ver):
            return op(_as_version(ver), _as_version(bound))
        check.description = description % bound
        return check
    return factory


lt = _predicate(operator.lt, 'requires version less than %s')
le = _predicate(operator.le, 'requires at most version %s')
eq = _predicate(operator.eq, 'requires version %s')
ne = _predicate(operator.ne, 'can not use version %s')
ge = _predicate(operator.ge, 'requires at least version %s')
gt = _predicate(operator.gt, 'requires version greater than %s')


def compare(ver, *predicates, **kwargs):
    """Check ``ver`` against predicates; raise or return a bool.

    With ``op=all`` (the default) every predicate must hold, with
    ``op=any`` one is enough. On failure the message names the predicates
    that failed, joined the way upstream osc-placement joins them.
    """
    exc = kwargs.get('exc', True)
    op = kwargs.get('op', all)
    if op(p(ver) for p in predicates):
        return True
    if not exc:
        return False
    joiner = ', and ' if op is all else ', or '
    failed = [p.description for p in predicates if not p(ver)]
    raise ValueError(
        'Operation or argument is not supported with version %s; %s'
        % (ver, joiner.join(failed)))


def get_version(cmd):
    """The microversion a command will use, negotiating if need be.

    Without a session (``--help``) nothing is sent and the client maximum
    is assumed; a documentation build has no client manager at all.
    """
    try:
        manager = cmd.app.client_manager
        if manager.session is None:
            return MAX_VERSION
        return manager.placement.api_version
    except AttributeError:
        return MIN_VERSION


def requested_version(app):
    """The version the user asked for, or None when it will be negotiated.

    Parsers use this instead of ``get_version`` so that building one never
    sends a request.
    """
    try:
        requested = library_seams.requested_api_versions(
            app.client_manager)['placement']
    except (AttributeError, KeyError, TypeError):
        return None
    return None if requested in NEGOTIATE_VERSIONS else requested


def check(*predicates, **kwargs):
    """Decorate a command method so it runs only at a suitable version."""
    def decorator(func):
        @functools.wraps(func)
        def wrapped(self, *args, **kw):
            compare(get_version(self), *predicates, **kwargs)
            return func(self, *args, **kw)
        return wrapped
    return decorator


class CheckerMixin:
    """Version checks for command classes.

    Commands ask by feature name: ``require_feature`` refuses a version
    without it, with upstream's text; ``supports_feature`` says whether the
    version in use has it.
    """

    def require_feature(self, feature):
        return self.check_version(ge(since(feature)))

    def supports_feature(self, feature):
        return supports(get_version(self), feature)

    def check_version(self, *predicates, **kwargs):
        return compare(get_version(self), *predicates, **kwargs)

    def compare_version(self, *predicates, **kwargs):
        kwargs['exc'] = False
        return compare(get_version(self), *predicates, **kwargs)
