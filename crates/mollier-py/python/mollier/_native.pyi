"""Type stubs of the native module (crates/mollier-py/src/lib.rs). Use the package `mollier`;
its functions wrap these."""

import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class ModelError(ValueError):
    """A model, motion or study file that cannot be read."""

    diagnostics: List[Dict[str, Any]]
    """Each problem: ``file``, ``line``, ``column`` (from 1, or None), ``path``, ``message``,
    ``hint``."""

class NotWellPosed(ValueError):
    """A model whose positions cannot be solved."""

class FrameError(RuntimeError):
    """A frame that could not be solved, or results that cannot be written."""

#: ``(columns, time (frames,), values (frames, columns), text columns)``
RawTable = Tuple[List[str], npt.NDArray[np.float64], npt.NDArray[np.float64], Dict[str, List[str]]]
#: ``(tables by name, failures as (time, reason), notes)``
RawResults = Tuple[Dict[str, RawTable], List[Tuple[float, str]], List[str]]
#: ``(tables by name, failures as (time, reason), notes, summary.json's figures as JSON text,
#: per table the unit of each column)``
RawSimulation = Tuple[Dict[str, RawTable], List[Tuple[float, str]], List[str], str, Dict[str, Dict[str, str]]]
#: A path, or ``(name, time (frames,), values (frames, columns), columns)``.
MotionArg = Union[str, os.PathLike, Tuple[str, npt.NDArray[np.float64], npt.NDArray[np.float64], List[str]]]
Progress = Optional[Callable[[int, int], Any]]

class Model:
    @staticmethod
    def load(path: Union[str, os.PathLike]) -> "Model": ...
    @staticmethod
    def from_text(text: str, file: str) -> "Model": ...
    @property
    def file(self) -> str: ...
    @property
    def inputs(self) -> List[str]: ...
    @property
    def muscles(self) -> List[str]: ...
    @property
    def load_sharing_muscles(self) -> List[str]: ...
    @property
    def forward_muscles(self) -> List[str]: ...
    def check(self) -> Dict[str, Any]: ...
    def kinematics(self, motion: MotionArg, second_order: bool = False, on_error: str = "stop",
                   progress: Progress = None) -> RawResults: ...
    def inverse_dynamics(self, motion: MotionArg, smooth: Optional[float] = None, on_error: str = "stop",
                         progress: Progress = None, loads: Optional[str] = None) -> RawResults: ...
    def ik(self, markers: str, tasks: Optional[str] = None, progress: Progress = None,
           tolerance: float = 1e-10) -> RawResults: ...
    def inverse(self, motion: MotionArg, criterion: str = "b", cone: bool = True, static_: bool = False,
                smooth: Optional[float] = None, progress: Progress = None,
                loads: Optional[str] = None) -> RawResults: ...
    def simulate(self, duration: float, excitations: Optional[MotionArg] = None, dt: Optional[float] = None,
                 integrator: Optional[str] = None, progress: Progress = None,
                 output_dt: Optional[float] = None, rtol: float = 1e-3, atol: float = 1e-5,
                 defect_tolerance: float = 0.01, loads: Optional[str] = None,
                 track: Optional[MotionArg] = None, atol_activation: Optional[float] = None,
                 controller: str = "elementary", steps_across_knots: bool = False,
                 rigid_tendons: Optional[float] = None, method: str = "ros23",
                 jacobian_every: int = 4) -> RawSimulation: ...

def study(path: Union[str, os.PathLike], out: Union[str, os.PathLike]) -> Tuple[List[str], int]: ...
def optimize(problem: Union[str, os.PathLike], out: Union[str, os.PathLike]) -> Tuple[List[str], bool]: ...
def scale(model: Union[str, os.PathLike], setup: Union[str, os.PathLike], out: Union[str, os.PathLike],
          markers: Optional[Union[str, os.PathLike]] = None, mass: Optional[float] = None) -> List[str]: ...
