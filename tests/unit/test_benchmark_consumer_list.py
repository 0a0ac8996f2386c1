# SPDX-License-Identifier: Apache-2.0
"""benchmarks.consumer_list refuses a run that did not print exactly the
seeded consumers: a fast wrong answer is no figure."""

import testtools

from benchmarks import consumer_list


class TestCheckFound(testtools.TestCase):

    def test_exactly_the_seeded_consumers(self):
        consumer_list.check_found('shape', 'b MIGRATION\na MIGRATION\n',
                                  ['a', 'b'])

    def test_one_missing_or_one_more_is_refused(self):
        self.assertRaises(SystemExit, consumer_list.check_found, 'shape',
                          'a\n', ['a', 'b'])
        self.assertRaises(SystemExit, consumer_list.check_found, 'shape',
                          'a\nb\nc\n', ['a', 'b'])

    def test_every_shape_names_no_provider(self):
        for name, words, expected in consumer_list.shapes((['m'], ['d'])):
            self.assertEqual(consumer_list.CONSUMER_LIST, words[:4])
            self.assertTrue(words[4].startswith('--'), name)
