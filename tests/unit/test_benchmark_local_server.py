# SPDX-License-Identifier: Apache-2.0
"""benchmarks.local_server.start(source_tree=...) runs the server of that
checkout, not the one this Python imports (nor one found in the working
directory, which ``python -m`` puts first on the path)."""

import os
import urllib.request

import fixtures
import testtools

from benchmarks import local_server

# A stand-in for another checkout's server: answers every GET with its
# own name, on the port the real command line gives.
FAKE_MAIN = '''
import http.server
import sys

port = int(sys.argv[sys.argv.index('--port') + 1])


class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'the other tree'
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.HTTPServer(('127.0.0.1', port), Answer).serve_forever()
'''


class TestSourceTree(testtools.TestCase):

    def test_the_server_of_the_given_tree_answers(self):
        tree = self.useFixture(fixtures.TempDir()).path
        package = os.path.join(tree, 'osc_placement', 'server')
        os.makedirs(package)
        for init in (os.path.join(tree, 'osc_placement', '__init__.py'),
                     os.path.join(package, '__init__.py')):
            open(init, 'w').close()
        with open(os.path.join(package, '__main__.py'), 'w') as f:
            f.write(FAKE_MAIN)
        # Started from this checkout's top, whose osc_placement would win
        # if the working directory were kept.
        here = os.getcwd()
        os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(
            local_server.__file__))))
        self.addCleanup(os.chdir, here)
        process, url = local_server.start('sqlite://', seconds=30,
                                          source_tree=tree)
        self.addCleanup(local_server.stop, process)
        with urllib.request.urlopen(url + '/', timeout=10) as answer:
            self.assertEqual(b'the other tree', answer.read())
