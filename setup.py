import setuptools

setuptools.setup(setup_requires=['pbr>=5.7.0'], pbr=True)
