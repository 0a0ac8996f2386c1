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
_PREPARED_INFO = 'osc_placement.pipeline.prepared'
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
        self.prepared = prepared
        # (kind, arguments of its send) of each command, in order; the
        # statements closed to make room go first, as nothing fails them.
        self.closes, self.commands = [], []
        self.preparing = {}

    def command(self, text):
        self.commands.append((_COMMAND, (text, None)))

    def statement(self, text, params):
        query, names = _converted(text)
        values = [_text_value(params[name]) for name in names]
        name = self.prepared.get(query) or self.preparing.get(query)
        if name is None:
            name = self._prepare(query)
        elif query in self.prepared:
            self.prepared.move_to_end(query)
        self.commands.append((_ROWS, (name, values)))

    def _prepare(self, query):
        while self.prepared and (len(self.prepared) + len(self.preparing)
                                 >= PREPARED_MAX):
            _, oldest = self.prepared.popitem(last=False)
            self.closes.append((_CLOSE, (oldest,)))
        name = self.preparing[query] = b'osc_%d' % next(_NAMES)
        self.commands.append((_PREPARE, (name, query)))
        return name

    def results(self):
        """The rows of each statement; the first error, once the sync
        is read (every later command was skipped)."""
        pgconn = self.pgconn
        pgconn.enter_pipeline_mode()
        try:
            self.commands[:0] = self.closes
            for kind, arguments in self.commands:
                _SEND[kind](pgconn, *arguments)
            pgconn.pipeline_sync()
            _flush(pgconn)
            rows, error = self._read_all()
            _expect_sync(pgconn)
        finally:
            _leave_pipeline_mode(pgconn)
        if error is not None:
            raise error
        return rows

    def _read_all(self):
        rows, error = [], None
        for kind, arguments in self.commands:
            result = _next_result(self.pgconn)
            if result is None or _next_result(self.pgconn) is not None:
                raise errors.OperationalError(_OUT_OF_ORDER)
            if result.status == pq.ExecStatus.FATAL_ERROR:
                error = error or self._error_of(result)
            elif kind == _PREPARE and result.status == _COMMAND_OK:
                name, query = arguments
                self.prepared[query] = name
            elif kind == _ROWS and error is None:
                rows.append(self._rows(result))
        return rows, error

    def _error_of(self, result):
        error = errors.error_from_result(result,
                                         encoding=self.raw.info.encoding)
        if isinstance(error, errors.InvalidSqlStatementName):
            # Something deallocated this module's statements (a DISCARD
            # ALL, or psycopg after a ROLLBACK it ran): prepared again.
            self.prepared.clear()
        return error

    def _rows(self, result):
        transformer = adapt.Transformer(self.raw)
        transformer.set_pgresult(result)
        return transformer.load_rows(0, result.ntuples, tuple)


_COMMAND, _CLOSE, _PREPARE, _ROWS = range(4)
_SEND = {
    _COMMAND: lambda pgconn, text, params: pgconn.send_query_params(
        text, params),
    _CLOSE: lambda pgconn, name: pgconn.send_close_prepared(name),
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


def _text_value(value):
    """A parameter in PostgreSQL's text form, for the cast the statement
    puts on it (SQLAlchemy renders one on each typed parameter)."""
    if value is None:
        return None
    kind = type(value)
    if kind is str:
        return value.encode()
    if kind is bool:
        return b'true' if value else b'false'
    if kind in (int, float, decimal.Decimal):
        return str(value).encode()
    if kind is list:
        return _array_text(value).encode()
    if kind is datetime.datetime:
        return value.isoformat(' ').encode()
    raise TypeError('no text form for a parameter of type %s' %
                    kind.__name__)


def _array_text(values):
    if all(type(value) is int for value in values):
        return '{%s}' % ','.join(map(str, values))
    items = []
    for value in values:
        if value is None:
            items.append('NULL')
        elif type(value) is int:
            items.append(str(value))
        elif type(value) is str:
            items.append('"%s"' % value.replace('\\', '\\\\').replace(
                '"', '\\"'))
        else:
            raise TypeError('no array text for an item of type %s' %
                            type(value).__name__)
    return '{%s}' % ','.join(items)
