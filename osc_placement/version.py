# SPDX-License-Identifier: Apache-2.0
"""Placement microversions as the client knows them.

Features are the names of the vocabulary the server shares,
``osc_placement.microversions.FEATURES``: each behaviour a microversion
brought, with the microversion it starts at. The supported microversions
are the ones it names, every one from ``MIN_VERSION`` to ``MAX_VERSION``.
Commands ask it one way, ``supports(ver, feature)``, which with
``refuse=True`` refuses a version without the feature with upstream
osc-placement's text (a ``ValueError``, which cliff prints as one line
before exiting 1). Help texts that name a version are templates filled by
``render``.
"""

import functools
import operator
import re

from osc_placement import library_seams
from osc_placement import microversions

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


# The microversions the vocabulary names, oldest first.
SUPPORTED_MICROVERSIONS = tuple(sorted(
    {feature.since for feature in microversions.FEATURES.values()},
    key=_as_version))
# '1' asks the client to negotiate the highest version both sides speak.
NEGOTIATE_VERSIONS = ('1',)
SUPPORTED_VERSIONS = NEGOTIATE_VERSIONS + SUPPORTED_MICROVERSIONS
MIN_VERSION = SUPPORTED_MICROVERSIONS[0]
MAX_VERSION = microversions.MAX_VERSION
# Upstream's name for the negotiation cap; with no gaps it is the maximum.
MAX_VERSION_NO_GAP = MAX_VERSION


def since(feature):
    """The microversion that brought ``feature`` (a FEATURES name)."""
    return microversions.FEATURES[feature].since


def before(feature):
    """The newest microversion without ``feature``."""
    index = SUPPORTED_MICROVERSIONS.index(since(feature))
    if index == 0:
        raise ValueError('every microversion has %s' % feature)
    return SUPPORTED_MICROVERSIONS[index - 1]


def supports(ver, feature, refuse=False):
    """True when ``ver`` has ``feature``; with ``refuse``, raise upstream's
    ValueError ("requires at least version X.Y") rather than answer False."""
    if refuse:
        return compare(ver, ge(since(feature)))
    return at_least(ver, since(feature))


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
        if feature not in microversions.FEATURES:
            raise KeyError('no feature %r in microversions.FEATURES (a '
                           'literal brace is written {{ or }})' % feature)
        return _Since(feature)


def render(template):
    """Fill in versions: ``{f}`` brings feature f, ``{f.before}`` lacks it."""
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
    """Upstream osc-placement's version checks for command classes, kept
    for code written against it; these commands ask ``supports`` by
    name instead."""

    def check_version(self, *predicates, **kwargs):
        return compare(get_version(self), *predicates, **kwargs)

    def compare_version(self, *predicates, **kwargs):
        kwargs['exc'] = False
        return compare(get_version(self), *predicates, **kwargs)
