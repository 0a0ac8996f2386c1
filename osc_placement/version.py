"""Placement microversions as the client knows them.

Every microversion from 1.0 to 1.39 is supported, and the table below is the
single place that says so. Commands ask this module whether the version in
use is new enough; a failed check raises ``ValueError`` with upstream
osc-placement's text, which cliff prints as one line before exiting 1.
"""

import functools
import operator
import re

# What each microversion brought, as a client user sees it. The keys are the
# supported microversions; nothing else in the client lists them again.
MICROVERSIONS = {
    '1.0': 'resource providers, inventories, usages, allocations',
    '1.1': 'provider aggregates',
    '1.2': 'custom resource classes',
    '1.3': 'member_of filter for provider lists',
    '1.4': 'resources filter for provider lists',
    '1.5': 'delete all inventories of a provider',
    '1.6': 'traits',
    '1.7': 'idempotent resource class create (PUT)',
    '1.8': 'project and user required on allocations',
    '1.9': 'usages per project and user',
    '1.10': 'allocation candidates',
    '1.11': 'allocations link in providers',
    '1.12': 'allocations as a dict keyed by provider',
    '1.13': 'allocations for several consumers at once',
    '1.14': 'nested providers (parent and root)',
    '1.15': 'last-modified and cache-control headers',
    '1.16': 'limit on allocation candidates',
    '1.17': 'required traits on allocation candidates',
    '1.18': 'required traits on provider lists',
    '1.19': 'aggregates carry the provider generation',
    '1.20': 'provider create returns the provider',
    '1.21': 'member_of on allocation candidates',
    '1.22': 'forbidden traits',
    '1.23': 'error codes',
    '1.24': 'repeated member_of',
    '1.25': 'granular request groups',
    '1.26': 'reserved may equal total',
    '1.27': 'all classes in provider summaries',
    '1.28': 'consumer generations',
    '1.29': 'nested allocation candidates',
    '1.30': 'reshaper',
    '1.31': 'in_tree on allocation candidates',
    '1.32': 'forbidden aggregates',
    '1.33': 'string request group suffixes',
    '1.34': 'request group mappings in candidates',
    '1.35': 'root_required on allocation candidates',
    '1.36': 'same_subtree and resourceless request groups',
    '1.37': 're-parenting and un-parenting providers',
    '1.38': 'consumer types',
    '1.39': 'any-of traits (in:) in required',
}

SUPPORTED_MICROVERSIONS = tuple(MICROVERSIONS)
# '1' asks the client to negotiate the highest version both sides speak.
NEGOTIATE_VERSIONS = ('1',)
SUPPORTED_VERSIONS = NEGOTIATE_VERSIONS + SUPPORTED_MICROVERSIONS
MIN_VERSION = SUPPORTED_MICROVERSIONS[0]
MAX_VERSION = SUPPORTED_MICROVERSIONS[-1]
# Upstream's name for the negotiation cap; with no gaps it is the maximum.
MAX_VERSION_NO_GAP = MAX_VERSION

# Upstream osc-placement negotiates at most 1.29. From 1.38 allocations need
# a consumer type and allocation and usage output gains consumer types, so a
# script written for upstream (no --consumer-type, parsing -f value columns)
# would break if a negotiated 1.38+ changed those commands. Those commands
# therefore run at most at this version when negotiating, unless the user
# asks for a consumer-type feature; an explicit version is always honoured.
COMPATIBLE_NEGOTIATION_CEILING = '1.37'

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
    return value if isinstance(value, _Version) else _Version(value)


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


def is_supported(text):
    """True for '1' (negotiate) and every microversion in the table."""
    if text in NEGOTIATE_VERSIONS:
        return True
    try:
        return parse(text) in MICROVERSIONS
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
        requested = app.client_manager._api_version['placement']
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
    """Version checks for command classes."""

    def check_version(self, *predicates, **kwargs):
        return compare(get_version(self), *predicates, **kwargs)

    def compare_version(self, *predicates, **kwargs):
        kwargs['exc'] = False
        return compare(get_version(self), *predicates, **kwargs)
