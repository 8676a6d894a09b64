"""Stand-in for `neuronxcc.nki.typing` (nt): type annotations only."""

from .sealed import SealedClass


class _Annotation(metaclass=SealedClass):
    def __class_getitem__(cls, item):
        return cls

    def __getitem__(self, item):
        return self


class tensor(_Annotation):  # noqa: N801
    pass


class mutable_tensor(_Annotation):  # noqa: N801
    pass


scalar = int
