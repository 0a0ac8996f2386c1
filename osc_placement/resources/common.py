"""Pieces shared by every placement command."""

import argparse

from osc_placement import version


class PlacementCommand(version.CheckerMixin):
    """Mixin for placement commands: version gate and client access.

    ``min_version`` is the microversion the whole command needs; it is
    checked once, before ``take_action``, with upstream's failure text.
    """

    min_version = version.MIN_VERSION

    @property
    def placement(self):
        return self.app.client_manager.placement

    def run(self, parsed_args):
        self.check_version(version.ge(self.min_version))
        return super().run(parsed_args)

    def get_json(self, url, **params):
        """GET ``url`` (with query ``params``) and return the JSON body."""
        return self.placement.request('GET', url, params=params).json()


def required_query(required, forbidden):
    """The ``required`` query values for --required/--forbidden options.

    A value holding a comma is an any-of list (1.39) and becomes its own
    ``in:`` entry; every plain name and every forbidden name (``!NAME``)
    share one more entry. Returned as a list so the key repeats, e.g.
    ``--required A,B --required C --forbidden D`` gives
    ``['in:A,B', 'C,!D']``.
    """
    any_of = ['in:' + value for value in required or () if ',' in value]
    plain = [value for value in required or () if ',' not in value]
    plain += ['!' + name for name in forbidden or ()]
    return any_of + ([','.join(plain)] if plain else [])


def required_needs_any_of(required):
    """True when a --required value is an any-of list (needs 1.39)."""
    return any(',' in value for value in required or ())


AGGREGATE_UUID_DEPRECATION = ('The --aggregate-uuid option is deprecated, '
                              'please use --member-of instead.')


def add_member_of_options(parser, dest_prefix=''):
    """``--member-of`` and its hidden, deprecated twin ``--aggregate-uuid``.

    They are mutually exclusive, as upstream has them.
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        '--member-of', default=[], action='append',
        dest=dest_prefix + 'member_of', metavar='<member_of>',
        help='A list of comma-separated UUIDs of the resource provider '
             'aggregates; the returned providers must be associated with '
             'at least one of them. May be repeated: every occurrence must '
             'be satisfied. A UUID prefixed with "!" excludes that '
             'aggregate (1.32).')
    group.add_argument(
        '--aggregate-uuid', default=[], action='append',
        dest=dest_prefix + 'aggregate_uuid', metavar='<aggregate_uuid>',
        help=argparse.SUPPRESS)
    return group


def member_of_query(member_of, aggregate_uuid, log):
    """The ``member_of`` query values; warns about --aggregate-uuid."""
    if aggregate_uuid:
        log.warning(AGGREGATE_UUID_DEPRECATION)
        return ['in:' + ','.join(aggregate_uuid)]
    return [_member_of_value(value) for value in member_of or ()]


def _member_of_value(value):
    # "!agg" or "!a,b" forbid aggregates (1.32); the server spells the
    # second "!in:a,b". Anything else is an any-of list.
    if value.startswith('!'):
        names = value[1:]
        return '!in:' + names if ',' in names else value
    return 'in:' + value


def forbids_aggregates(member_of):
    """True when a --member-of value forbids aggregates (needs 1.32)."""
    return any(value.startswith('!') for value in member_of or ())


def at_least(ver, first):
    """True when microversion ``ver`` is ``first`` or newer."""
    return version.compare(ver, version.ge(first), exc=False)


def available_at(table, ver):
    """The names in ``table`` that microversion ``ver`` has.

    ``table`` is a sequence of ``(name, first microversion)`` pairs, e.g. a
    command's columns and the version that added each; order is kept.
    """
    return tuple(name for name, first in table if at_least(ver, first))
