# SPDX-License-Identifier: Apache-2.0
"""benchmarks/client.py against a real HTTP server that closes each
connection after one answer, as a server closes an idle keep-alive
connection: the client's next request on it fails."""

import http.server
import json
import threading

import testtools

from benchmarks import client as http_client


class _OneAnswerPerConnection(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def _answer(self):
        length = int(self.headers.get('Content-Length') or 0)
        self.rfile.read(length)
        self.server.seen.append(self.command)
        body = json.dumps({'method': self.command,
                           'path': self.path}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        # Without saying so (no "Connection: close"): the client takes
        # the connection for one it may use again.
        self.close_connection = True

    do_GET = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args):
        pass


class TestClient(testtools.TestCase):

    def setUp(self):
        super().setUp()
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                 _OneAnswerPerConnection)
        server.seen = []
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.server = server
        self.client = http_client.Client(
            'http://127.0.0.1:%d' % server.server_port)

    def test_idempotent_requests_are_sent_again_on_a_new_connection(self):
        for method in ('GET', 'PUT', 'DELETE', 'GET'):
            response = self.client.request(method, '/x',
                                           params={'a': 'b,c'})
            self.assertEqual({'method': method, 'path': '/x?a=b%2Cc'},
                             response.json())
        self.assertEqual(['GET', 'PUT', 'DELETE', 'GET'], self.server.seen)

    def test_a_post_is_not_sent_twice(self):
        self.client.get('/x')
        self.assertRaises(http_client._CLOSED_WHILE_IDLE,
                          self.client.post, '/x', {'a': 1})
        # Not carried out twice, and the next request finds a new
        # connection.
        self.assertEqual(['GET'], self.server.seen[:1])
        self.assertLessEqual(self.server.seen.count('POST'), 1)
        self.assertEqual('GET', self.client.get('/x').json()['method'])

    def test_an_unexpected_status_is_an_error(self):
        error = self.assertRaises(http_client.PlacementError,
                                  self.client.get, '/x', expect=(204,))
        self.assertIn('GET /x -> 200', str(error))
