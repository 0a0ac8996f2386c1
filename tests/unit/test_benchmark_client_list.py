# SPDX-License-Identifier: Apache-2.0
"""``benchmarks.client_list``'s checks and measures, on real processes."""

import sys

import testtools

from benchmarks import client_list


def python(code):
    return [sys.executable, '-c', code]


class TestClientList(testtools.TestCase):

    def test_clients_printing_other_bytes_stop_the_benchmark(self):
        argvs = {'ours': python('print("a")'),
                 'upstream': python('print("a")'),
                 'placement': python('print("b")')}
        error = self.assertRaises(
            SystemExit, client_list.check_same_output, 'list', argvs,
            client_list.clean_environment())
        self.assertEqual('list: placement print other bytes than upstream',
                         str(error))

    def test_the_same_bytes_give_their_size(self):
        argvs = dict.fromkeys(client_list.CLIENTS, python('print("abc")'))
        self.assertEqual(4, client_list.check_same_output(
            'list', argvs, client_list.clean_environment()))

    def test_cpu_is_the_childs_own(self):
        # A child that sleeps takes wall time but next to no CPU; one
        # that spins takes both.
        env = client_list.clean_environment()
        wall, cpu, _ = client_list.measured_run(
            python('import time; time.sleep(0.3)'), env)
        self.assertGreater(wall, 0.3)
        self.assertLess(cpu, 0.2)
        _, busy, _ = client_list.measured_run(
            python('sum(range(10 ** 7))'), env)
        self.assertGreater(busy, cpu)

    def test_every_format_and_start_up_is_timed(self):
        labels = [label for label, _ in
                  client_list.shapes(client_list.FORMATS)]
        self.assertEqual(['provider list -f %s' % fmt
                          for fmt in client_list.FORMATS]
                         + ['class list -f value (start-up)'], labels)
