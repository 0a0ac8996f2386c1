# SPDX-License-Identifier: Apache-2.0
"""Commands sent through psycopg's libpq wrapper without psycopg's cursors:
several in libpq's pipeline mode, flushed at once with one sync, and
their results read back in order, waiting for the socket without the
GIL. Statements are prepared once per connection under names of their
own, their parameters sent as text (the statements cast them), their
binary results loaded by psycopg's loaders.

libpq keeps the connection's transaction state, which psycopg reads from
it: commands sent here leave psycopg's view of the connection true.
"""

import collections
import datetime
import decimal
import functools
import itertools
import re
import select

from psycopg import adapt
from psycopg import errors
from psycopg import pq


def command(raw, text):
    """Run the one statement ``text`` (no parameters, no rows) on the
    psycopg connection ``raw``."""
    exchange = Exchange(raw, {})
    exchange.command(text)
    exchange.results()


# Statements kept prepared per connection by this module, beside the
# driver's own (the API's other statements): the candidate statements
# hold much more of a backend's memory than those.
PREPARED_MAX = 150
_PREPARED_INFO = 'osc_placement.libpq.prepared'
_NAMES = itertools.count(1)


def prepared_on(record):
    """{libpq text: statement name} prepared here on the connection of
    the pool's ``record`` (gone with the connection), oldest use first."""
    prepared = record.info.get(_PREPARED_INFO)
    if prepared is None:
        prepared = record.info[_PREPARED_INFO] = collections.OrderedDict()
    return prepared


class Exchange:
    """Commands gathered, then queued in libpq's pipeline mode, sent at
    once with a sync, and their results read back in order."""

    def __init__(self, raw, prepared):
        self.raw = raw
        self.pgconn = raw.pgconn
        self.encoding = raw.info.encoding
        self.prepared = prepared
        # (kind, arguments of its send) of each command, in order.
        self.commands = []
        # {query: name} of the statements this exchange prepares; the
        # names of those it uses.
        self.preparing = {}
        self.used = set()

    def command(self, text):
        self.commands.append((_COMMAND, (text, None)))

    def statement(self, text, params):
        query, names = _converted(text)
        values = [_text_value(params[name], self.encoding)
                  for name in names]
        name = self.prepared.get(query) or self.preparing.get(query)
        if name is None:
            name = self.preparing[query] = b'osc_%d' % next(_NAMES)
            self.commands.append((_PREPARE, (name, query)))
        elif query in self.prepared:
            self.prepared.move_to_end(query)
        self.used.add(name)
        self.commands.append((_ROWS, (name, values)))

    def results(self):
        """The rows of each statement; the database's first error, once
        the sync is read (every later command was skipped)."""
        pgconn = self.pgconn
        commands = self._room_made() + self.commands
        pgconn.enter_pipeline_mode()
        try:
            for kind, arguments in commands:
                _SEND[kind](pgconn, *arguments)
            pgconn.pipeline_sync()
            _flush(pgconn)
            results, error = self._read(commands)
        finally:
            _leave_pipeline_mode(pgconn)
        if error is not None:
            raise error
        return [self._rows(result) for result in results]

    def _room_made(self):
        """DEALLOCATEs of the oldest statements this exchange does not
        use, to keep PREPARED_MAX with those it prepares: sent first, as
        nothing before them can fail them."""
        excess = len(self.prepared) + len(self.preparing) - PREPARED_MAX
        oldest = [(query, name) for query, name in self.prepared.items()
                  if name not in self.used][:max(0, excess)]
        for query, _ in oldest:
            del self.prepared[query]
        return [(_COMMAND, (b'DEALLOCATE ' + name, None))
                for _, name in oldest]

    def _read(self, commands):
        """(each statement's result, the database's first error). Rows
        are loaded once pipeline mode is left, so that a value no loader
        takes leaves the connection in order; a connection lost after
        the database's own error raises that error."""
        results, error = [], None
        try:
            for kind, arguments in commands:
                result = _next_result(self.pgconn)
                if result is None or _next_result(self.pgconn) is not None:
                    raise errors.OperationalError(_OUT_OF_ORDER)
                if result.status == pq.ExecStatus.FATAL_ERROR:
                    error = error or errors.error_from_result(
                        result, encoding=self.encoding)
                elif kind == _PREPARE and result.status == _COMMAND_OK:
                    name, query = arguments
                    self.prepared[query] = name
                elif kind == _ROWS and error is None:
                    results.append(result)
            _expect_sync(self.pgconn)
        except errors.OperationalError as gone:
            if error is None:
                raise
            raise error from gone
        finally:
            if isinstance(error, errors.InvalidSqlStatementName):
                self._forget_all_but_mine()
        return results, error

    def _forget_all_but_mine(self):
        # Something deallocated the statements (a DISCARD ALL, or psycopg
        # after a ROLLBACK it ran): only those prepared here are known.
        mine = {query: name for query, name in self.prepared.items()
                if self.preparing.get(query) == name}
        self.prepared.clear()
        self.prepared.update(mine)

    def _rows(self, result):
        transformer = adapt.Transformer(self.raw)
        transformer.set_pgresult(result)
        return transformer.load_rows(0, result.ntuples, tuple)


_COMMAND, _PREPARE, _ROWS = range(3)
_SEND = {
    _COMMAND: lambda pgconn, text, params: pgconn.send_query_params(
        text, params),
    _PREPARE: lambda pgconn, name, query: pgconn.send_prepare(name, query),
    _ROWS: lambda pgconn, name, values: pgconn.send_query_prepared(
        name, values, result_format=pq.Format.BINARY),
}
_COMMAND_OK = pq.ExecStatus.COMMAND_OK
_OUT_OF_ORDER = 'the database answered the pipeline out of order'


def _leave_pipeline_mode(pgconn):
    """Out of pipeline mode. A connection gone is left to the pool to
    discard; one left with results unread (by an error part way) is
    closed, so that the pool discards it too."""
    if pgconn.status != pq.ConnStatus.OK:
        return
    try:
        pgconn.exit_pipeline_mode()
    except errors.Error:
        pgconn.finish()


def _next_result(pgconn):
    """libpq's next result, waiting (without the GIL) for its data."""
    while pgconn.is_busy():
        _wait(pgconn, select.POLLIN)
        pgconn.consume_input()
    return pgconn.get_result()


def _flush(pgconn):
    """Send what libpq holds; answers that arrive meanwhile are read in,
    or the server, blocked on writing them, might stop reading."""
    while pgconn.flush():
        if _wait(pgconn, select.POLLIN | select.POLLOUT) & select.POLLIN:
            pgconn.consume_input()


def _wait(pgconn, events):
    poller = select.poll()
    poller.register(pgconn.socket, events)
    [(_, ready)] = poller.poll()
    return ready


def _expect_sync(pgconn):
    result = _next_result(pgconn)
    if result is None or result.status != pq.ExecStatus.PIPELINE_SYNC:
        raise errors.OperationalError(_OUT_OF_ORDER)


@functools.lru_cache(maxsize=1024)
def _converted(text):
    """(libpq's text of the driver's ``text``, its parameter names in
    ``$n`` order): ``%(name)s`` numbered, ``%%`` a percent sign."""
    names = []

    def number(match):
        name = match.group(1)
        if name is None:
            return '%'
        if name not in names:
            names.append(name)
        return '$%d' % (names.index(name) + 1)
    return _PLACEHOLDER.sub(number, text).encode(), tuple(names)


_PLACEHOLDER = re.compile(r'%%|%\((\w+)\)s')


def _text_value(value, encoding='utf-8'):
    """A parameter in PostgreSQL's text form, for the cast the statement
    puts on it (SQLAlchemy renders one on each typed parameter)."""
    if value is None:
        return None
    encoded = _text(value).encode(encoding)
    if b'\x00' in encoded:
        # libpq would end the parameter there: refused, as psycopg does.
        raise errors.DataError('PostgreSQL text cannot contain NUL (0x00) '
                               'bytes')
    return encoded


def _text(value):
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return 'true' if value else 'false'
    if kind in (int, float, decimal.Decimal):
        return _number(value)
    if kind is list:
        return _array_text(value)
    if kind is datetime.datetime and value.tzinfo is None:
        return value.isoformat(' ')
    raise TypeError('no text form for a parameter of type %s%s' % (
        kind.__name__,
        ' with a time zone' if kind is datetime.datetime else ''))


def _number(value):
    """A whole number without a fraction, which an integer's input
    takes: to the API's schemas JSON's 1.0 is an integer."""
    if type(value) is float:
        return str(int(value)) if value.is_integer() else repr(value)
    if (type(value) is decimal.Decimal and value.is_finite()
            and value == value.to_integral_value()):
        return str(int(value))
    return str(value)


def _array_text(values):
    if all(type(value) is int for value in values):
        return '{%s}' % ','.join(map(str, values))
    items = []
    for value in values:
        if value is None:
            items.append('NULL')
        elif type(value) in (int, float, decimal.Decimal):
            items.append(_number(value))
        elif type(value) is str:
            items.append('"%s"' % value.replace('\\', '\\\\').replace(
                '"', '\\"'))
        else:
            raise TypeError('no array text for an item of type %s' %
                            type(value).__name__)
    return '{%s}' % ','.join(items)
