# SPDX-License-Identifier: Apache-2.0
"""The application built by make_app (server/app.py): start-up on a
database file, request framing, and the authentication strategies."""

import io
import logging
import os
import re
import time

import fixtures
import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import migration
from tests.server.test_migration import HEAD_REVISION
from tests.server.webob_requests import request as _request


class SQLiteFileTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        self.url = 'sqlite:///' + os.path.join(tmp, 'placement.sqlite')

    def make_app(self):
        return app_mod.make_app(conf_mod.make_conf(
            self.url, enforce_new_defaults=False))


class TestStartup(SQLiteFileTestCase):

    def test_restart_keeps_providers(self):
        first = self.make_app()
        resp = _request(first, 'POST', '/resource_providers',
                        '{"name": "keep me"}')
        self.assertEqual(200, resp.status_int)
        second = self.make_app()
        resp = _request(second, 'GET', '/resource_providers')
        self.assertEqual(['keep me'], [
            p['name'] for p in resp.json['resource_providers']])

    def test_schema_is_at_head_and_standards_synced(self):
        app = self.make_app()
        resp = _request(app, 'GET', '/resource_classes')
        self.assertIn('VCPU', [c['name']
                               for c in resp.json['resource_classes']])
        from osc_placement.server.db import engine
        self.assertEqual(HEAD_REVISION,
                         migration.current_version(
                             engine.create_engine(self.url)))

    def test_missing_connection_refuses_to_start(self):
        conf = conf_mod.make_conf(None)
        self.assertRaises(ValueError, app_mod.make_app, conf)

    def test_content_length_checks(self):
        app = self.make_app()
        req = webob.Request.blank('/resource_providers', method='POST',
                                  headers={'X-Auth-Token': 'admin'})
        req.environ['CONTENT_LENGTH'] = 'pony'
        resp = req.get_response(app)
        self.assertEqual(400, resp.status_int)
        self.assertIn('content-length header must be an integer',
                      resp.json['errors'][0]['detail'])
        req = webob.Request.blank('/resource_providers', method='POST',
                                  headers={'X-Auth-Token': 'admin'})
        req.environ['CONTENT_LENGTH'] = '2'
        req.environ['wsgi.input'] = io.BytesIO(b'{}')
        resp = req.get_response(app)
        self.assertIn('content-type header required when content-length',
                      resp.json['errors'][0]['detail'])

    def test_empty_path_needs_a_token_with_noauth2(self):
        app = self.make_app()
        req = webob.Request.blank('/placement', headers={})
        req.script_name, req.path_info = '/placement', ''
        self.assertEqual(401, req.get_response(app).status_int)
        req = webob.Request.blank('/placement',
                                  headers={'X-Auth-Token': 'admin'})
        req.script_name, req.path_info = '/placement', ''
        self.assertEqual(200, req.get_response(app).status_int)


class TestKeystone(testtools.TestCase):

    def test_root_bypasses_auth_and_api_needs_a_token(self):
        conf = conf_mod.make_conf('sqlite://', auth_strategy='keystone')
        conf.set_override('www_authenticate_uri',
                          'http://keystone.example/identity',
                          'keystone_authtoken')
        app = app_mod.make_app(conf)
        self.assertEqual(200, webob.Request.blank('/').get_response(
            app).status_int)
        resp = webob.Request.blank('/resource_providers').get_response(app)
        self.assertEqual(401, resp.status_int)
        self.assertIn('keystone.example', resp.headers['WWW-Authenticate'])
        self.assertIn('x-openstack-request-id', resp.headers)


class TestAccessLineWhenSent(testtools.TestCase):
    """The access line is written when the server closes the response it
    has sent, with the request's ids although the thread's log context
    is cleared by then."""

    def records(self):
        records = []
        handler = logging.Handler()
        handler.emit = records.append
        app_mod.LOG.addHandler(handler)
        self.addCleanup(app_mod.LOG.removeHandler, handler)
        level = app_mod.LOG.level
        app_mod.LOG.setLevel(logging.INFO)
        self.addCleanup(app_mod.LOG.setLevel, level)
        return records

    def test_written_at_close_with_the_request_id(self):
        records = self.records()

        def inner(environ, start_response):
            start_response('200 OK', [('Content-Length', '2')])
            return [b'{}']

        started = []
        body = app_mod.request_id_middleware(inner)(
            {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/x',
             'REMOTE_ADDR': '127.0.0.1'},
            lambda status, headers, exc_info=None: started.extend(headers))
        self.assertEqual(b'{}', b''.join(body))
        self.assertEqual([], records)
        body.close()
        self.assertEqual(1, len(records))
        self.assertIn('"GET /x" status: 200 len: 2',
                      records[0].getMessage())
        self.assertEqual(dict(started)['x-openstack-request-id'],
                         records[0].context.request_id)
        body.close()
        self.assertEqual(1, len(records))

    def test_upstream_fields_then_time_and_agent(self):
        records = self.records()
        pause = 0.05

        def inner(environ, start_response):
            start_response('200 OK', [('Content-Length', '2'), (
                'openstack-api-version', 'placement 1.39')])
            return [b'{}']

        body = app_mod.request_id_middleware(inner)(
            {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/x',
             'QUERY_STRING': 'a=1', 'REMOTE_ADDR': '192.0.2.7',
             'HTTP_USER_AGENT': 'python-requests/2.32'},
            lambda status, headers, exc_info=None: None)
        b''.join(body)
        # Sending takes time too: counted until the server closes.
        time.sleep(pause)
        body.close()
        line = records[0].getMessage()
        self.assertRegex(line, r'^192\.0\.2\.7 "GET /x\?a=1" status: 200 '
                         r'len: 2 microversion: 1\.39 time: (\d+\.\d{6}) '
                         r'agent: "python-requests/2\.32"$')
        self.assertGreaterEqual(
            float(re.search(r'time: (\S+)', line).group(1)), pause)

    def test_agent_stays_one_quoted_field(self):
        records = self.records()
        for agent, logged in (('say "hi"\\\n\x7f', r'say \"hi\"\\\x0a\x7f'),
                              ('', '-')):
            environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/'}
            if agent:
                environ['HTTP_USER_AGENT'] = agent
            app_mod.request_id_middleware(
                lambda environ, start_response: start_response(
                    '200 OK', []) or [b''])(
                environ, lambda *args: None).close()
            self.assertTrue(records[-1].getMessage().endswith(
                'agent: "%s"' % logged), records[-1].getMessage())
