# SPDX-License-Identifier: Apache-2.0
"""Pieces shared by every placement command."""

import argparse

from osc_placement import library_seams
from osc_placement.resources import help_text
from osc_placement import version


# The distribution these commands come in, as cliff names it in help.
DISTRIBUTION = 'osc-placement'


def is_our_module(name):
    return name.partition('.')[0] == 'osc_placement'


class PlacementCommand(version.CheckerMixin):
    """Mixin for placement commands: version gate and client access.

    ``required_feature`` names the feature (a name of
    ``microversions.FEATURES``) the whole command needs; it is checked
    once, before ``take_action``, with upstream's failure text. A
    command's docstring is its help text: it names a version as
    ``{feature}``, filled in from the table when the class is defined.
    """

    required_feature = 'base'
    # Commands whose required options or columns change above what upstream
    # negotiates set this (see version.COMPATIBLE_NEGOTIATION_CEILING).
    negotiation_ceiling = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get('__doc__'):
            cls.__doc__ = version.render(cls.__doc__)

    @property
    def placement(self):
        return self.app.client_manager.placement

    # --- Help as plain text (help_text.py) ---
    def get_parser(self, prog_name):
        """The parser keeps the docstring's reStructuredText (the docs
        render it); ``--help`` prints it as plain text."""
        parser = super().get_parser(prog_name)
        parser.formatter_class = help_text.PlainTextHelpFormatter
        return parser

    def produce_output(self, parsed_args, column_names, data):
        """cliff's output, handed to a flushing stdout in one write.

        cliff's formatters write in small pieces, and a stdout that
        flushes at every write (``PYTHONUNBUFFERED``) or line (a
        terminal) makes each a system call. A buffered stdout is left
        as it is.
        """
        stdout = self.app.stdout
        if not flushes_often(stdout):
            return super().produce_output(parsed_args, column_names, data)
        self.app.stdout = gathered = GatheredOutput(stdout)
        try:
            return super().produce_output(parsed_args, column_names, data)
        finally:
            self.app.stdout = stdout
            gathered.release()

    def get_epilog(self):
        """cliff's epilog, without cliff's scan of every installed
        distribution: every command of ours is in osc-placement, and the
        shell is in it only when it is ours (``placement``)."""
        ours = is_our_module(type(self.app).__module__)
        return library_seams.command_epilog(
            self, provided_by=None if ours else DISTRIBUTION)

    def run(self, parsed_args):
        if self.negotiation_ceiling and not self.uses_newer_features(
                parsed_args):
            self.placement.limit_negotiated_version(self.negotiation_ceiling)
        version.supports(version.get_version(self), self.required_feature,
                         refuse=True)
        return super().run(parsed_args)

    def uses_newer_features(self, parsed_args):
        """True when an option asks for what lies above the ceiling."""
        return False

    def get_json(self, url, **params):
        """GET ``url`` (with query ``params``) and return the JSON body."""
        return self.placement.request('GET', url, params=params).json()


class NamedItemCommand(PlacementCommand):
    """A command on one item of a collection (a resource class, a trait),
    named by its one positional argument.

    ``collection`` is the collection's URL and ``name_help`` the
    argument's help. A command whose whole answer is the request's
    success names only its ``method``; others write ``take_action``.
    """

    collection = None
    name_help = None
    method = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help=self.name_help)
        return parser

    def item_url(self, name):
        return '%s/%s' % (self.collection, name)

    def take_action(self, parsed_args):
        self.placement.request(self.method, self.item_url(parsed_args.name))


def flushes_often(stream):
    """True for a text stream that passes each write, or each line, on to
    the system at once."""
    return bool(getattr(stream, 'write_through', False)
                or getattr(stream, 'line_buffering', False))


class GatheredOutput:
    """Stands in for a stream: keeps what is written, answers everything
    else (``isatty``, ``encoding``, ``fileno``) as the stream does, and
    hands the text over in one write on ``release``."""

    def __init__(self, stream):
        self._stream = stream
        self._pieces = []

    def write(self, text):
        self._pieces.append(text)
        return len(text)

    def release(self):
        if self._pieces:
            self._stream.write(''.join(self._pieces))
            self._pieces = []
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


# --- Query values of the trait and aggregate options.

def required_query(required, forbidden):
    """``required`` values: ``--required A,B --required C --forbidden D``
    gives ``['in:A,B', 'C,!D']`` (a comma: ``any_of_traits``), a list so
    that the key repeats."""
    any_of = ['in:' + value for value in required or () if ',' in value]
    plain = [value for value in required or () if ',' not in value]
    plain += ['!' + name for name in forbidden or ()]
    return any_of + ([','.join(plain)] if plain else [])


def required_needs_any_of(required):
    """True when a --required value is an any-of list (``any_of_traits``)."""
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
        help=version.render(
            'A list of comma-separated UUIDs of the resource provider '
            'aggregates; the returned providers must be associated with at '
            'least one of them. May be repeated: every occurrence must be '
            'satisfied. A UUID prefixed with "!" excludes that aggregate '
            '({forbidden_aggregates}).'))
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
    # "!agg" or "!a,b" forbid aggregates; the server spells the
    # second "!in:a,b". Anything else is an any-of list.
    if value.startswith('!'):
        names = value[1:]
        return '!in:' + names if ',' in names else value
    return 'in:' + value


def forbids_aggregates(member_of):
    """True when a --member-of value needs ``forbidden_aggregates``."""
    return any(value.startswith('!') for value in member_of or ())


# --- Rendering a row, and refusing options the version lacks.

def dict_properties(item, fields):
    """osc_lib's get_dict_properties ('' if unset), minus its openstacksdk."""
    # A list, not a generator, which tuple() consumes more slowly:
    # ``resource provider list`` calls this once per provider.
    return tuple([item.get(field, '') for field in fields])


def needed_features(options, gates):
    """The features ``options`` (parsed arguments, or a dict such as a
    request group) need, by ``(dest, applies, feature)`` gates in table
    order, so the first refused is upstream's; unset options need none."""
    for dest, applies, feature in gates:
        value = (options.get(dest) if isinstance(options, dict)
                 else getattr(options, dest, None))
        if _given(value) and applies(value):
            yield feature


def _given(value):
    # An int option given as 0 (a generation, say) is given; an unset
    # option is None, an unset flag False, an unset append option [].
    if value is None or value is False:
        return False
    return not hasattr(value, '__len__') or len(value) > 0


# --- Which failures are worth another attempt, and the pause before it.

def is_generation_conflict(exc):
    """True for a 409 caused by a stale provider generation.

    Since error codes (feature ``error_codes``) the server says so with the
    ``placement.concurrent_update`` code; older versions only say it in the
    text. Other conflicts (an
    inventory in use, a duplicate name) are not worth retrying.
    """
    if getattr(exc, 'http_status', None) != 409:
        return False
    code = _error_code(getattr(exc, '__cause__', None))
    if code is not None:
        return code == 'placement.concurrent_update'
    text = str(exc).lower()
    return 'generation' in text or 'concurrently updated' in text


def is_server_error(exc):
    """True for a 5xx answer (osc-lib's exception keeps it as the cause)."""
    status = getattr(getattr(exc, '__cause__', None), 'http_status', None)
    return status is not None and 500 <= status < 600


def is_retryable(exc):
    """A lost generation race or a server error: worth another attempt."""
    return is_generation_conflict(exc) or is_server_error(exc)


# Pause before retrying after a server error: doubled at each attempt,
# capped, and jittered so that a pool of threads that all failed at once
# (a locked SQLite database, an overloaded server) do not retry in step.
SERVER_ERROR_BACKOFF = 0.05
SERVER_ERROR_BACKOFF_CAP = 2.0


def back_off(exc, attempt, sleep=None):
    """Wait before retrying a server error; a lost race retries at once."""
    if not is_server_error(exc):
        return
    import random
    import time
    delay = min(SERVER_ERROR_BACKOFF * 2 ** (attempt - 1),
                SERVER_ERROR_BACKOFF_CAP)
    (sleep or time.sleep)(delay * random.uniform(0.5, 1.5))


def error_code(exc):
    """Placement's error code behind ``exc``; None before ``error_codes``."""
    return _error_code(getattr(exc, '__cause__', None))


def retry_server_errors(func, *args, attempts):
    """``func(*args)``, called again after a server error (with back-off)
    up to ``attempts`` times in all: one failed request of thousands
    should not fail a whole read."""
    for attempt in range(1, attempts + 1):
        try:
            return func(*args)
        except Exception as exc:
            if attempt == attempts or not is_server_error(exc):
                raise
            back_off(exc, attempt)


def _error_code(cause):
    try:
        return cause.response.json()['errors'][0].get('code')
    except Exception:  # no response, not JSON, no errors list
        return None


# --- Sending many requests at once.

# Concurrent requests of the commands that send many: enough to hide the
# latency of one request behind others, few enough not to swamp a small
# Placement, and no more than the connections requests keeps per host (10):
# a thread beyond that opens a connection per request, and urllib3 warns
# "Connection pool is full" on stderr for each.
WORKERS = 10
# Fewer, for a server that cannot take concurrent requests (1: one at a
# time); more is refused, for the reason above.
CONCURRENCY_ENV = 'OSC_PLACEMENT_CONCURRENCY'


def concurrency():
    """The requests a command may have in flight at once."""
    import os
    value = os.environ.get(CONCURRENCY_ENV, '').strip()
    if not value:
        return WORKERS
    if not value.isdigit() or not 1 <= int(value) <= WORKERS:
        from osc_lib import exceptions
        raise exceptions.CommandError(
            '%s must be a whole number from 1 to %d; got %r.'
            % (CONCURRENCY_ENV, WORKERS, value))
    return int(value)


def run_concurrently(func, items, workers=None, progress=None):
    """``[func(item) for item in items]``, run on a bounded thread pool.

    Results (or the exception each call raised) come back in the order of
    ``items``, so output stays deterministic. ``progress(done, total)`` is
    called from this thread as calls finish. keystoneauth sessions are
    thread-safe, so commands may share one across the pool.
    """
    from concurrent import futures

    items = list(items)
    results = [None] * len(items)
    if not items:
        return results
    workers = min(workers or concurrency(), len(items))
    with futures.ThreadPoolExecutor(max_workers=workers) as pool:
        pending = {pool.submit(_outcome, func, item): index
                   for index, item in enumerate(items)}
        for done, future in enumerate(futures.as_completed(pending), 1):
            results[pending[future]] = future.result()
            if progress is not None:
                progress(done, len(items))
    return results


def _outcome(func, item):
    try:
        return func(item)
    except Exception as exc:  # reported per item by the caller
        return exc


class StderrProgress:
    """A ``done/total`` line on stderr, only when stderr is a terminal.

    Scripts that capture stderr get no control characters; people watching
    a thousand providers being updated see that it is moving.
    """

    def __init__(self, label, stream=None):
        import sys
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = _is_terminal(self.stream)

    def __call__(self, done, total):
        if not self.enabled:
            return
        self.stream.write('\r%s: %d/%d' % (self.label, done, total))
        if done == total:
            self.stream.write('\n')
        self.stream.flush()


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# --- Naming a provider by UUID or by name (every command that takes one).

NO_SUCH_PROVIDER = "No resource provider with a name or UUID of '%s' exists."
NAME_OR_UUID_HELP = 'Name or UUID of the resource provider'


def confirm_removal(command, question, what, how_to_confirm):
    """Go on only when "y" is typed at a terminal after ``question``.

    Called once the removals are shown and ``--yes`` was not given.
    Anywhere but a terminal, and on any other answer, the command fails
    with nothing changed.
    """
    from osc_lib import exceptions
    stdin, stderr = command.app.stdin, command.app.stderr
    if _is_terminal(stdin) and _is_terminal(stderr):
        stderr.write(question + ' [y/N] ')
        stderr.flush()
        if stdin.readline().strip().lower() in ('y', 'yes'):
            return
        raise exceptions.CommandError('Not confirmed; nothing was changed.')
    raise exceptions.CommandError(
        'Refusing to remove %s without confirmation; nothing was changed. '
        '%s' % (what, how_to_confirm))


def is_uuid(value):
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def provider_uuid(command, name_or_uuid):
    """The UUID of provider ``name_or_uuid``, a name looked up; a UUID is
    not checked, so the command's own request gives upstream's 404."""
    if is_uuid(name_or_uuid):
        return name_or_uuid
    return _provider_by_name(command, name_or_uuid)['uuid']


def provider_uuid_lookup(command):
    """``provider_uuid`` for many values: each name is looked up once."""
    import functools

    return functools.lru_cache(maxsize=None)(
        functools.partial(provider_uuid, command))


def find_provider(command, name_or_uuid):
    """The provider named ``name_or_uuid``, as ``GET`` shows it.

    A UUID is looked up directly, anything else by name. Either way, no
    match is a CommandError that names what was asked for.
    """
    from osc_lib import exceptions

    if not is_uuid(name_or_uuid):
        return _provider_by_name(command, name_or_uuid)
    try:
        return command.get_json('/resource_providers/' + name_or_uuid)
    except exceptions.NotFound:
        raise exceptions.CommandError(
            NO_SUCH_PROVIDER % name_or_uuid) from None


def _provider_by_name(command, name):
    from osc_lib import exceptions

    found = command.get_json('/resource_providers',
                             name=name)['resource_providers']
    if not found:
        raise exceptions.CommandError(NO_SUCH_PROVIDER % name)
    return found[0]


def amounts_text(resources):
    """``VCPU=2,MEMORY_MB=512``: a string in every format, as in the table."""
    return ','.join('%s=%s' % item for item in resources.items())


def used_of_capacity_text(resources):
    """``VCPU=2/16,MEMORY_MB=512/8192``: used/capacity per class of
    ``{class: {'used': n, 'capacity': n}}``."""
    return ','.join('%s=%s/%s' % (rc, value['used'], value['capacity'])
                    for rc, value in resources.items())
