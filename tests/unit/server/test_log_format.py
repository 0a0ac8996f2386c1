# SPDX-License-Identifier: Apache-2.0
"""log_format's formatter writes every line exactly as oslo.log's."""

import copy
import logging
import sys

from oslo_config import cfg
from oslo_context import context as context_utils
from oslo_log import formatters
from oslo_log import log
import testtools

from osc_placement.server import log_format


def _conf(**overrides):
    conf = cfg.ConfigOpts()
    log.register_options(conf)
    conf([], project='placement', default_config_files=[])
    for name, value in overrides.items():
        conf.set_override(name, value)
    return conf


def _record(level=logging.INFO, msg='%s "%s %s" status: %s', args=(
        '127.0.0.1', 'GET', '/resource_providers', '200'), created=None,
        **extra):
    record = logging.LogRecord('osc_placement.server.app', level,
                               __file__, 42, msg, args, None, 'func')
    if created is not None:
        record.created = created
        record.msecs = int((created - int(created)) * 1000) + 0.0
    record.__dict__.update(extra)
    return record


def _context(request_id=None, **values):
    made = context_utils.RequestContext(**values)
    # It makes up a request id when given none.
    made.request_id = request_id
    # Constructing one makes it the thread's: only what a record carries
    # is tested here, unless a test sets it.
    context_utils._request_store.context = None
    return made


class TestSameLinesAsOsloLog(testtools.TestCase):

    def formatters(self, conf=None, datefmt='%Y-%m-%d %H:%M:%S'):
        conf = conf or _conf()
        kwargs = dict(project='placement', version='1', datefmt=datefmt,
                      config=conf)
        return (formatters.ContextFormatter(**kwargs),
                log_format.ContextFormatter(**kwargs))

    def assertSameLine(self, record, oslo, ours, shortcut=True):
        expected = oslo.format(copy.copy(record))
        mine = copy.copy(record)
        if shortcut:
            # The shortcut is taken: oslo.log's own format never runs.
            self.assertIsNotNone(ours._plain_context(mine))
        self.assertEqual(expected, ours.format(mine))
        return expected

    def test_access_lines_of_every_kind_of_caller(self):
        oslo, ours = self.formatters()
        contexts = [
            _context(request_id='req-1'),
            _context(request_id='req-2', global_request_id='req-g'),
            _context(request_id='req-3', user_id='u', project_id='p'),
            _context(request_id='req-4', user_id='u', project_id='p',
                     domain_id='d', user_domain_id='ud',
                     project_domain_id='pd'),
            _context(request_id='req-5', system_scope='all', user_id='u'),
        ]
        for created in (1765000000.0, 1765000000.5, 1765000001.999):
            for context in contexts:
                line = self.assertSameLine(
                    _record(created=created, context=context), oslo, ours)
                self.assertIn(context.request_id, line)

    def test_the_thread_context_when_the_record_has_none(self):
        oslo, ours = self.formatters()
        context_utils.RequestContext(request_id='req-thread',
                                     user_id='someone')
        self.addCleanup(setattr, context_utils._request_store, 'context',
                        None)
        line = self.assertSameLine(_record(), oslo, ours)
        self.assertIn('req-thread someone', line)

    def test_other_lines_are_oslo_logs_own(self):
        oslo, ours = self.formatters()
        context = _context(request_id='req-1')
        try:
            raise ValueError('boom')
        except ValueError:
            failed = sys.exc_info()
        for record in (
                _record(level=logging.DEBUG, context=context),
                _record(level=logging.WARNING, context=context),
                _record(context=context, exc_info=failed),
                _record(context=context, instance={'uuid': 'i-1'}),
                _record(context=context, instance_uuid='i-2'),
                _record(context=_context(request_id='req-1',
                                         resource_uuid='r-1')),
                _record(context=_context(request_id=None, user_id='u')),
                _record(context=None),
                _record(context={'request_id': 'req-dict'}),
        ):
            self.assertIsNone(ours._plain_context(copy.copy(record)))
            self.assertSameLine(record, oslo, ours, shortcut=False)

    def assertSameOutcome(self, record, oslo, ours):
        try:
            expected = oslo.format(copy.copy(record))
        except TypeError:
            self.assertRaises(TypeError, ours.format, copy.copy(record))
        else:
            self.assertEqual(expected, ours.format(copy.copy(record)))

    def test_a_message_that_does_not_format(self):
        oslo, ours = self.formatters()
        for args in (('a',), ('a', 'b')):
            self.assertSameOutcome(_record(
                msg='%d', args=args, context=_context(request_id='req-1')),
                oslo, ours)

    def test_a_record_without_the_process_id(self):
        # logging.logProcesses off.
        oslo, ours = self.formatters()
        record = _record(context=_context(request_id='req-1'), process=None)
        self.assertIsNone(ours._plain_context(copy.copy(record)))
        self.assertSameOutcome(record, oslo, ours)

    def test_other_format_options_are_oslo_logs_own(self):
        for conf in (
                _conf(logging_context_format_string='%(request_id)s '
                      '%(message)s %(isotime)s'),
                _conf(logging_user_identity_format='%(user)s')):
            oslo, ours = self.formatters(conf)
            record = _record(context=_context(request_id='req-1',
                                              user_id='u'))
            self.assertIsNone(ours._plain_context(copy.copy(record)))
            self.assertSameLine(record, oslo, ours, shortcut=False)
        oslo, ours = self.formatters(datefmt=None)
        self.assertSameLine(_record(context=_context(request_id='req-1')),
                            oslo, ours, shortcut=False)

    def test_a_date_format_of_ones_own(self):
        oslo, ours = self.formatters(datefmt='%d/%m %H.%M.%S')
        self.assertSameLine(_record(context=_context(request_id='req-1')),
                            oslo, ours)


class TestInstall(testtools.TestCase):

    def test_replaces_oslo_logs_formatter_and_no_other(self):
        logger = logging.getLogger('osc_placement.tests.log_format')
        conf = _conf()
        theirs = logging.StreamHandler()
        theirs.setFormatter(formatters.ContextFormatter(
            project='placement', version='2', datefmt='%H', config=conf))
        json_handler = logging.StreamHandler()
        json_formatter = formatters.JSONFormatter()
        json_handler.setFormatter(json_formatter)
        for handler in (theirs, json_handler):
            logger.addHandler(handler)
            self.addCleanup(logger.removeHandler, handler)
        log_format.install(logger)
        self.assertIs(log_format.ContextFormatter, type(theirs.formatter))
        self.assertEqual(('placement', '2', '%H', conf), (
            theirs.formatter.project, theirs.formatter.version,
            theirs.formatter.datefmt, theirs.formatter.conf))
        self.assertIs(json_formatter, json_handler.formatter)
