import testtools

from osc_placement import version


class TestVersionTable(testtools.TestCase):

    def test_every_microversion_from_1_0_to_1_39_without_gaps(self):
        expected = tuple('1.%d' % minor for minor in range(40))
        self.assertEqual(expected, version.SUPPORTED_MICROVERSIONS)

    def test_negotiate_value_is_supported_too(self):
        self.assertEqual(('1',) + version.SUPPORTED_MICROVERSIONS,
                         version.SUPPORTED_VERSIONS)

    def test_negotiation_cap_is_the_highest_version(self):
        self.assertEqual('1.39', version.MAX_VERSION)
        self.assertEqual(version.MAX_VERSION, version.MAX_VERSION_NO_GAP)


class TestParsing(testtools.TestCase):

    def test_normalises_leading_zeros(self):
        self.assertEqual('1.5', version.parse('1.05'))

    def test_rejects_malformed_versions(self):
        for bad in ('1', '1.', 'a.b', '1.2.3', '', '10.1', ' 1.x'):
            self.assertRaisesRegex(ValueError, 'invalid version number',
                                   version.parse, bad)

    def test_at_least_compares_numerically(self):
        self.assertTrue(version.at_least('1.10', '1.9'))
        self.assertTrue(version.at_least('1.38', '1.38'))
        self.assertFalse(version.at_least('1.9', '1.10'))

    def test_lowest_compares_numerically(self):
        self.assertEqual('1.9', version.lowest('1.10', '1.9', '1.39'))

    def test_supported_values(self):
        for good in ('1', '1.0', '1.29', '1.30', '1.36', '1.39', '1.05'):
            self.assertTrue(version.is_supported(good), good)

    def test_unsupported_values(self):
        for bad in ('1.40', '2.0', '0.9', 'latest', 'abc', '', '2'):
            self.assertFalse(version.is_supported(bad), bad)

    def test_unsupported_message_names_the_range(self):
        self.assertEqual(
            "Unsupported placement API version '1.40': use 1 to negotiate, "
            "or a microversion from 1.0 to 1.39",
            version.unsupported_message('1.40'))


class TestCompare(testtools.TestCase):

    def test_versions_compare_numerically(self):
        self.assertTrue(version.compare('1.10', version.gt('1.9')))
        self.assertTrue(version.compare('1.2', version.lt('1.10')))

    def test_each_predicate(self):
        cases = [
            (version.lt, '1.5', '1.4', '1.5'),
            (version.le, '1.5', '1.5', '1.6'),
            (version.eq, '1.5', '1.5', '1.6'),
            (version.ne, '1.5', '1.6', '1.5'),
            (version.ge, '1.5', '1.5', '1.4'),
            (version.gt, '1.5', '1.6', '1.5'),
        ]
        for factory, bound, passing, failing in cases:
            predicate = factory(bound)
            self.assertTrue(version.compare(passing, predicate))
            self.assertFalse(version.compare(failing, predicate, exc=False))

    def test_failure_text_is_upstreams(self):
        error = self.assertRaises(ValueError, version.compare, '1.1',
                                  version.ge('1.2'))
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.1; requires at least version 1.2',
                         str(error))

    def test_all_joins_failed_predicates_with_and(self):
        error = self.assertRaises(ValueError, version.compare, '1.1',
                                  version.ge('1.2'), version.eq('1.3'))
        self.assertIn('requires at least version 1.2, and requires version '
                      '1.3', str(error))

    def test_any_passes_with_one_and_joins_with_or(self):
        self.assertTrue(version.compare('1.1', version.ge('1.2'),
                                        version.lt('1.2'), op=any))
        error = self.assertRaises(ValueError, version.compare, '1.5',
                                  version.lt('1.2'), version.gt('1.8'),
                                  op=any)
        self.assertIn('requires version less than 1.2, or requires version '
                      'greater than 1.8', str(error))


class _Manager:
    def __init__(self, session, placement=None, requested='1'):
        self.session = session
        self.placement = placement
        self._api_version = {'placement': requested}


class _Client:
    api_version = '1.20'


class _Cmd(version.CheckerMixin):
    def __init__(self, manager):
        self.app = type('App', (), {'client_manager': manager})()

    @version.check(version.ge('1.10'))
    def guarded(self):
        return 'ran'


class TestGetVersion(testtools.TestCase):

    def test_without_session_assumes_maximum_and_sends_nothing(self):
        cmd = _Cmd(_Manager(session=None, placement=None))
        self.assertEqual('1.39', version.get_version(cmd))

    def test_with_session_asks_the_client(self):
        cmd = _Cmd(_Manager(session=object(), placement=_Client()))
        self.assertEqual('1.20', version.get_version(cmd))

    def test_without_client_manager_is_minimum(self):
        self.assertEqual('1.0', version.get_version(object()))

    def test_check_decorator_gates_the_method(self):
        cmd = _Cmd(_Manager(session=object(), placement=_Client()))
        self.assertEqual('ran', cmd.guarded())
        _Client.api_version = '1.9'
        self.addCleanup(setattr, _Client, 'api_version', '1.20')
        self.assertRaisesRegex(ValueError, 'requires at least version 1.10',
                               cmd.guarded)

    def test_mixin_methods(self):
        cmd = _Cmd(_Manager(session=object(), placement=_Client()))
        self.assertTrue(cmd.compare_version(version.ge('1.20')))
        self.assertFalse(cmd.compare_version(version.ge('1.21')))
        self.assertRaises(ValueError, cmd.check_version, version.ge('1.21'))

    def test_requested_version_is_none_when_negotiating(self):
        app = type('App', (), {'client_manager': _Manager(None)})()
        self.assertIsNone(version.requested_version(app))
        app.client_manager._api_version['placement'] = '1.38'
        self.assertEqual('1.38', version.requested_version(app))
