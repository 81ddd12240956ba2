"""Configs reject values of the wrong type with a message naming the parameter (not a bare comparison error)."""

import math

import numpy as np
import pytest

from unlearnkit.core import Request
from unlearnkit.experiments.centralized import describe_request
from unlearnkit.methods.pdudt import PDUDTConfig
from unlearnkit.methods.pdudt.certify import GapConstants
from unlearnkit.train import SGDConfig


@pytest.mark.parametrize("radius", [[1, 2], "a", None])
def test_sgd_radius_of_the_wrong_type_names_the_parameter(radius):
    with pytest.raises(TypeError, match="radius"):
        SGDConfig(steps=1, lr=0.1, radius=radius)


def test_sgd_radius_nan_or_nonpositive_is_out_of_range():
    for bad in (math.nan, 0.0, -1.0):
        with pytest.raises(ValueError, match="radius"):
            SGDConfig(steps=1, lr=0.1, radius=bad)
    assert SGDConfig(steps=1, lr=0.1, radius=2).radius == 2


@pytest.mark.parametrize("constants", [math.nan, 1.0, "x", {"L": 1.0}])
def test_pdudt_constants_must_be_gap_constants(constants):
    with pytest.raises(TypeError, match="constants"):
        PDUDTConfig(constants=constants)


def test_pdudt_gap_constants_reject_nan():
    with pytest.raises((ValueError, TypeError), match="L"):
        GapConstants(L=math.nan, sgd_var=0.0, het_var=0.0, delta_f=1.0, delta_f_tilde=1.0, rho1=0.5, rho2=0.5)


def test_backdoor_request_says_the_samples_are_backdoored():
    from types import SimpleNamespace

    req = Request("samples", np.arange(60))
    bd = SimpleNamespace(indices=np.arange(60)[::-1], patch=3, target=0)
    assert describe_request(req, bd) == "forget 60 backdoored samples (trigger 3x3, target 0)"
    assert describe_request(req, None) == "forget 60 samples"
    # a request that is not the poisoned set is described as it is
    assert describe_request(Request("samples", np.arange(5)), bd) == "forget 5 samples"
