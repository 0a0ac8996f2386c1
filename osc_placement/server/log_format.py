# SPDX-License-Identifier: Apache-2.0
"""oslo.log's context formatter, with a shortcut for the lines a request
logs at INFO (its access line above all).

oslo.log's ``ContextFormatter`` works out every line from scratch: the
context's whole dictionary, twice, a local-time ISO stamp that its
default format never prints, a new format style; a large part of what a
short request costs the server. Under oslo.log's default format options
this formatter writes the same characters from the few values they
print; for any other option, level, exception, instance or context it
is oslo.log's formatter, unchanged.
"""

import logging

from oslo_context import context as context_utils
from oslo_log import formatters

# The format options the shortcut writes (oslo.log's defaults): with
# any other value configured, every line is oslo.log's own.
CONTEXT_FORMAT = ('%(asctime)s.%(msecs)03d %(process)d %(levelname)s '
                  '%(name)s [%(global_request_id)s %(request_id)s '
                  '%(user_identity)s] %(instance)s%(message)s')
USER_IDENTITY_FORMAT = ('%(user)s %(project)s %(domain)s %(system_scope)s '
                        '%(user_domain)s %(project_domain)s')


class ContextFormatter(formatters.ContextFormatter):
    """oslo.log's ``ContextFormatter`` (same arguments, same output)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        conf = self.conf
        # formatTime's text without a date format holds milliseconds:
        # not one per second.
        self._shortcut = (
            conf is not None and bool(self.datefmt)
            and conf.logging_context_format_string == CONTEXT_FORMAT
            and conf.logging_user_identity_format == USER_IDENTITY_FORMAT)
        # (second, its text under datefmt), shared by the threads.
        self._stamp = (None, None)

    def format(self, record):
        context = self._plain_context(record)
        if context is None:
            return super().format(record)
        try:
            record.message = record.getMessage()
        except TypeError:
            # oslo.log writes a line of its own for a message that does
            # not format.
            return super().format(record)
        record.asctime = self._time_text(record.created)
        return '%s.%03d %d %s %s [%s %s %s] %s' % (
            record.asctime, record.msecs, record.process, record.levelname,
            record.name, context.global_request_id, context.request_id,
            _user_identity(context), record.message)

    def _plain_context(self, record):
        """The record's context when the shortcut writes its line exactly
        as oslo.log would, else None: an INFO line (no debug suffix, no
        error summary) without exception, stack or instance, whose
        context is oslo.context's own class with a request id and no
        instance or resource."""
        if not (self._shortcut and record.levelno == logging.INFO
                and record.exc_info is None and not record.exc_text
                and record.stack_info is None
                and type(record.process) is int):
            return None
        fields = record.__dict__
        if 'instance' in fields or 'instance_uuid' in fields:
            return None
        context = fields.get('context', context_utils.get_current())
        if (type(context) is not context_utils.RequestContext
                or not context.request_id or context.resource_uuid
                or getattr(context, 'instance', None)
                or getattr(context, 'instance_uuid', None)):
            return None
        return context

    def _time_text(self, created):
        # time.strftime is to the second: lines of one second share it.
        second = int(created)
        cached_second, text = self._stamp
        if cached_second != second:
            text = self.formatTime(logging.makeLogRecord(
                {'created': second}), self.datefmt)
            # One assignment: another thread reads either pair whole.
            self._stamp = (second, text)
        return text


def _user_identity(context):
    """USER_IDENTITY_FORMAT of the context, a missing value as ``-``."""
    return '%s %s %s %s %s %s' % tuple(value or '-' for value in (
        context.user_id, context.project_id, context.domain_id,
        context.system_scope, context.user_domain_id,
        context.project_domain_id))


def install(logger=None):
    """Put this formatter in place of oslo.log's ``ContextFormatter`` on
    each handler of ``logger`` (the root logger) that has one, with the
    same project, version, date format and configuration."""
    for handler in (logger or logging.getLogger()).handlers:
        old = handler.formatter
        if type(old) is formatters.ContextFormatter:
            handler.setFormatter(ContextFormatter(
                project=old.project, version=old.version,
                datefmt=old.datefmt, config=old.conf))
