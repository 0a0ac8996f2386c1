"""A worker's log lines written by a thread of their own
(server/log_writer.py): the same lines, in order, with the context and
arguments of the moment they were logged, none lost when the process
ends."""

import logging
import multiprocessing
import os
import threading
import time

import fixtures
import testtools
from oslo_config import cfg
from oslo_context import context
from oslo_log import formatters
from oslo_log import log

from osc_placement.server import log_writer

LOG = logging.getLogger('osc_placement.test_log_writer')


class _SlowHandler(logging.Handler):
    """Records the formatted lines, slowly: lines pile up in the queue."""

    def __init__(self, seconds=0.0):
        super().__init__()
        self.seconds = seconds
        self.lines = []
        self.threads = set()

    def emit(self, record):
        time.sleep(self.seconds)
        self.threads.add(threading.current_thread().name)
        self.lines.append(self.format(record))


def _oslo_formatter():
    root = logging.getLogger()
    before = list(root.handlers)
    conf = cfg.ConfigOpts()
    log.register_options(conf)
    conf([], project='placement')
    # Parsing gave the root logger a stderr handler: not this test's.
    for handler in set(root.handlers) - set(before):
        root.removeHandler(handler)
    return formatters.ContextFormatter(project='placement', version='1',
                                       config=conf)


class TestWriteFromAThread(testtools.TestCase):

    def setUp(self):
        super().setUp()
        root = logging.getLogger()
        saved = list(root.handlers), root.level
        for handler in saved[0]:
            root.removeHandler(handler)
        root.setLevel(logging.INFO)

        def restore():
            for handler in list(root.handlers):
                root.removeHandler(handler)
            for handler in saved[0]:
                root.addHandler(handler)
            root.setLevel(saved[1])
        self.addCleanup(restore)
        # No request's context must outlive the test on this thread.
        self.addCleanup(setattr, context._request_store, 'context', None)

    def _handler(self, seconds=0.0, formatter=None):
        handler = _SlowHandler(seconds)
        handler.setFormatter(formatter or logging.Formatter('%(message)s'))
        logging.getLogger().addHandler(handler)
        return handler

    def test_lines_carry_the_context_they_were_logged_in(self):
        handler = self._handler(formatter=_oslo_formatter())
        stop = log_writer.write_from_a_thread()
        mine = context.RequestContext(request_id='req-%s' % ('1' * 36),
                                      user_id='alice', project_id='p1')
        LOG.info('"GET /" status: %s', 200)
        context._request_store.context = None
        LOG.info('between requests')
        stop()
        self.assertEqual(2, len(handler.lines), handler.lines)
        self.assertIn('[None %s alice p1' % mine.request_id,
                      handler.lines[0])
        self.assertIn('"GET /" status: 200', handler.lines[0])
        self.assertNotIn(mine.request_id, handler.lines[1])
        # Written by the writer thread, not the request's.
        self.assertNotIn(threading.current_thread().name, handler.threads)

    def test_arguments_as_they_were_when_logged(self):
        handler = self._handler(seconds=0.05)
        stop = log_writer.write_from_a_thread()
        found = ['first']
        LOG.info('found %s', found)
        found.append('second')
        stop()
        self.assertEqual(["found ['first']"], handler.lines)

    def test_stop_writes_every_queued_line_in_order(self):
        handler = self._handler(seconds=0.02)
        stop = log_writer.write_from_a_thread()
        for n in range(10):
            LOG.info('line %d', n)
        stop()
        self.assertEqual(['line %d' % n for n in range(10)], handler.lines)
        # Stopped twice (atexit and multiprocessing both call it): once.
        stop()
        # Lines logged after are written directly.
        LOG.info('after')
        self.assertEqual('after', handler.lines[-1])
        self.assertEqual([handler], logging.getLogger().handlers)

    def test_a_worker_process_that_ends_writes_its_queued_lines(self):
        # As granian's workers end: multiprocessing's child exits with
        # os._exit, which runs no atexit function.
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'worker.log')
        child = multiprocessing.get_context('fork').Process(
            target=_log_and_return, args=(path,))
        child.start()
        child.join(30)
        self.assertEqual(0, child.exitcode)
        with open(path) as f:
            self.assertEqual(['line %d' % n for n in range(5)],
                             f.read().splitlines())


class _SlowFileHandler(logging.FileHandler):

    def emit(self, record):
        time.sleep(0.05)
        super().emit(record)


def _log_and_return(path):
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.INFO)
    handler = _SlowFileHandler(path)
    handler.setFormatter(logging.Formatter('%(message)s'))
    root.addHandler(handler)
    log_writer.write_from_a_thread()
    for n in range(5):
        LOG.info('line %d', n)
    # Returns with the lines still queued.
