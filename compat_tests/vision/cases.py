"""Transform cases shared by make_fixtures.py (run with real torch + torchvision) and the compat tests (run
with torchlike.vision). Each case is ``fn(torch, torchvision) -> result``; results are turned into plain
numpy / Python values by ``to_plain``. Inputs are made with numpy only, so both sides see the same pixels."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def image_array(h: int = 13, w: int = 17, c: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def pil(c: int = 3) -> Any:
    from PIL import Image

    arr = image_array(c=c)
    return Image.fromarray(arr[:, :, 0] if c == 1 else arr)


def u8(torch: Any, c: int = 3) -> Any:
    return torch.tensor(image_array(c=c)).permute(2, 0, 1).contiguous()


def f32(torch: Any, c: int = 3) -> Any:
    return u8(torch, c).float() / 255


def to_plain(x: Any) -> Any:
    if hasattr(x, "getbands"):  # PIL image
        return {"pil_mode": x.mode, "pixels": np.asarray(x).copy()}
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return x.detach().cpu().numpy()
    if isinstance(x, (tuple, list)):
        return [to_plain(v) for v in x]
    return x


def _seeded(make: Callable[[Any, Any], Any], kind: str, times: int = 3, seed: int = 0) -> Callable:
    """Apply the transform ``times`` times under manual_seed(seed); also return one more rand(1) draw, which
    shows whether the generator was advanced exactly as torchvision advances it."""

    def case(torch: Any, tv: Any) -> Any:
        torch.manual_seed(seed)
        t = make(torch, tv)
        outs = []
        for _ in range(times):
            img = pil() if kind == "pil" else (u8(torch) if kind == "u8" else f32(torch))
            outs.append(t(img))
        return outs + [torch.rand(1)]

    return case


def _both(name: str, make: Callable, kinds: tuple = ("pil", "u8", "f32")) -> dict:
    return {f"{name}/{k}": _seeded(make, k) for k in kinds}


def _functional(name: str, call: Callable, kinds: tuple = ("pil", "u8", "f32")) -> dict:
    def wrap(kind: str) -> Callable:
        def case(torch: Any, tv: Any) -> Any:
            img = pil() if kind == "pil" else (u8(torch) if kind == "u8" else f32(torch))
            return call(tv.transforms.functional, img, torch)

        return case

    return {f"F.{name}/{k}": wrap(k) for k in kinds}


CASES: dict[str, Callable] = {}
for _mode in ("NEAREST", "BILINEAR", "BICUBIC"):
    CASES.update(_functional(f"resize_{_mode}_down", lambda F, x, t, m=_mode: F.resize(x, [6, 8], _im_f(F, m))))
    CASES.update(_functional(f"resize_{_mode}_up", lambda F, x, t, m=_mode: F.resize(x, 21, _im_f(F, m))))
CASES.update(_functional("resize_noaa", lambda F, x, t: F.resize(x, [7, 9], antialias=False), ("u8", "f32")))
CASES.update(_functional("center_crop", lambda F, x, t: [F.center_crop(x, 8), F.center_crop(x, [20, 11])]))
for _pm in ("constant", "edge", "reflect", "symmetric"):
    CASES.update(_functional(f"pad_{_pm}", lambda F, x, t, m=_pm: F.pad(x, [3, 1, 2, 4], 7, m)))
CASES.update(_functional("crop_outside", lambda F, x, t: F.crop(x, -2, 5, 9, 15)))
CASES.update(_functional("flips", lambda F, x, t: [F.hflip(x), F.vflip(x)]))
CASES.update(_functional("rotate", lambda F, x, t: [F.rotate(x, 33.0), F.rotate(x, -20.0, _im_f(F, "BILINEAR")),
                                                    F.rotate(x, 45.0, expand=True), F.rotate(x, 10.0, center=[3, 4])]))  # fmt: skip
CASES.update(_functional("affine", lambda F, x, t: [F.affine(x, 15.0, [2, -1], 1.1, [5.0, 3.0]),
                                                    F.affine(x, -8.0, [0, 3], 0.9, 4.0, _im_f(F, "BILINEAR"))]))  # fmt: skip
CASES.update(_functional("color", lambda F, x, t: [F.adjust_brightness(x, 1.3), F.adjust_contrast(x, 0.7),
                                                   F.adjust_saturation(x, 1.6), F.adjust_hue(x, 0.12),
                                                   F.adjust_hue(x, -0.3), F.adjust_gamma(x, 0.8)]))  # fmt: skip
CASES.update(_functional("gray", lambda F, x, t: [F.rgb_to_grayscale(x), F.rgb_to_grayscale(x, 3)]))
CASES.update(_functional("blur", lambda F, x, t: [F.gaussian_blur(x, [3, 5], [0.8, 1.3]), F.gaussian_blur(x, 5)]))
CASES.update(_functional("to_tensor", lambda F, x, t: [F.to_tensor(x), F.pil_to_tensor(x)], ("pil",)))
CASES.update(_functional("to_pil", lambda F, x, t: F.to_pil_image(x), ("u8", "f32")))
CASES.update(_functional("convert_dtype", lambda F, x, t: [F.convert_image_dtype(x, t.float64),
                                                           F.convert_image_dtype(x, t.uint8),
                                                           F.convert_image_dtype(x, t.int16)], ("u8", "f32")))  # fmt: skip
CASES.update(_functional("normalize", lambda F, x, t: F.normalize(x, [0.4, 0.5, 0.6], [0.2, 0.3, 0.25]), ("f32",)))
CASES.update(_functional("erase", lambda F, x, t: F.erase(x, 2, 3, 4, 5, t.tensor(0.5)), ("f32",)))
CASES.update(_functional("auto_ops", lambda F, x, t: [F.invert(x), F.posterize(x, 3) if not x_is_float(x) else x,
                                                      F.solarize(x, 100 if not x_is_float(x) else 0.4),
                                                      F.adjust_sharpness(x, 1.7), F.autocontrast(x),
                                                      F.equalize(x) if not x_is_float(x) else x]))  # fmt: skip
CASES.update(_functional("five_crop", lambda F, x, t: F.five_crop(x, [5, 6])))


def x_is_float(x: Any) -> bool:
    return hasattr(x, "is_floating_point") and x.is_floating_point()


def _im_f(F: Any, name: str) -> Any:
    return getattr(F.InterpolationMode, name)


CASES.update(_both("RandomCrop", lambda t, tv: tv.transforms.RandomCrop(9, padding=2)))
CASES.update(_both("RandomCrop_pad", lambda t, tv: tv.transforms.RandomCrop((16, 20), pad_if_needed=True,
                                                                             padding_mode="reflect")))  # fmt: skip
CASES.update(_both("RandomResizedCrop", lambda t, tv: tv.transforms.RandomResizedCrop(8)))
CASES.update(_both("RandomResizedCrop_fallback", lambda t, tv: tv.transforms.RandomResizedCrop(5, scale=(3.0, 4.0))))
CASES.update(_both("RandomHorizontalFlip", lambda t, tv: tv.transforms.RandomHorizontalFlip()))
CASES.update(_both("RandomVerticalFlip", lambda t, tv: tv.transforms.RandomVerticalFlip(0.3)))
CASES.update(_both("RandomRotation", lambda t, tv: tv.transforms.RandomRotation(30)))
CASES.update(
    _both("RandomAffine", lambda t, tv: tv.transforms.RandomAffine(20, (0.2, 0.1), (0.8, 1.2), (-5, 5, -3, 3)))
)
CASES.update(_both("ColorJitter", lambda t, tv: tv.transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)))
CASES.update(_both("RandomGrayscale", lambda t, tv: tv.transforms.RandomGrayscale(0.5)))
CASES.update(_both("GaussianBlur", lambda t, tv: tv.transforms.GaussianBlur(5, (0.1, 2.0))))
CASES.update(_both("RandomApply", lambda t, tv: tv.transforms.RandomApply([tv.transforms.RandomHorizontalFlip(1.0)])))
CASES.update(_both("RandomErasing", lambda t, tv: tv.transforms.RandomErasing(1.0, value="random"), ("f32",)))
CASES.update(_both("RandomErasing_value", lambda t, tv: tv.transforms.RandomErasing(0.7, value=(1, 2, 3)), ("f32",)))
CASES.update(_both("Resize_CenterCrop", lambda t, tv: tv.transforms.Compose([tv.transforms.Resize(11),
                                                                             tv.transforms.CenterCrop(9)])))  # fmt: skip
CASES.update(_both("cifar_train", lambda t, tv: tv.transforms.Compose([
    tv.transforms.RandomCrop(12, padding=2), tv.transforms.RandomHorizontalFlip(),
    tv.transforms.Normalize((0.49, 0.48, 0.45), (0.25, 0.24, 0.26))]), ("f32",)))  # fmt: skip
CASES.update(_both("AutoAugment", lambda t, tv: tv.transforms.AutoAugment(), ("pil", "u8")))
CASES.update(_both("RandAugment", lambda t, tv: tv.transforms.RandAugment(), ("pil", "u8")))
CASES.update(_both("TrivialAugmentWide", lambda t, tv: tv.transforms.TrivialAugmentWide(), ("pil", "u8")))
CASES.update(_both("v2.RandomResizedCrop", lambda t, tv: tv.transforms.v2.RandomResizedCrop(8), ("pil", "f32")))
CASES.update(_both("v2.RandomCrop", lambda t, tv: tv.transforms.v2.RandomCrop(9, padding=2), ("pil", "f32")))
CASES.update(_both("v2.RandomHorizontalFlip", lambda t, tv: tv.transforms.v2.RandomHorizontalFlip(), ("pil", "f32")))
CASES.update(_both("v2.ColorJitter", lambda t, tv: tv.transforms.v2.ColorJitter(0.4, 0.4, 0.4), ("pil", "f32")))
CASES.update(_both("v2.RandomErasing", lambda t, tv: tv.transforms.v2.RandomErasing(1.0), ("f32",)))


def _reprs(torch: Any, tv: Any) -> list:
    T = tv.transforms
    ts = [
        T.Resize(11), T.Resize((5, 6), T.InterpolationMode.BICUBIC, antialias=False), T.CenterCrop(5),
        T.RandomCrop(9, padding=2), T.RandomResizedCrop(8, scale=(0.5, 1.0)), T.RandomHorizontalFlip(0.3),
        T.RandomVerticalFlip(), T.ColorJitter(0.4, (0.5, 1.5), 0, 0.1), T.RandomRotation(30, center=(1, 2)),
        T.RandomAffine(20, (0.2, 0.1), (0.8, 1.2), 5, T.InterpolationMode.BILINEAR, fill=3), T.Grayscale(3),
        T.RandomGrayscale(), T.GaussianBlur(5), T.Pad([1, 2], fill=4, padding_mode="edge"),
        T.Normalize((0.5,), (0.2,)), T.ToTensor(), T.PILToTensor(), T.ToPILImage(), T.ToPILImage("RGB"),
        T.ConvertImageDtype(torch.float32), T.Lambda(lambda x: x), T.RandomErasing(),
        T.RandomApply([T.CenterCrop(3), T.RandomVerticalFlip()], p=0.4), T.Compose([T.CenterCrop(3), T.ToTensor()]),
        T.FiveCrop(3), T.TenCrop(3, vertical_flip=True), T.AutoAugment(), T.RandAugment(), T.TrivialAugmentWide(),
        T.RandomInvert(), T.RandomPosterize(3), T.RandomSolarize(100), T.RandomAdjustSharpness(2),
        T.RandomAutocontrast(), T.RandomEqualize(),
    ]  # fmt: skip
    return [repr(t) for t in ts]


CASES["reprs"] = _reprs


# --- utils, io, ops ---------------------------------------------------------------------------------------


def _boxes(torch: Any, n: int = 12, seed: int = 3) -> tuple:
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 20, (n, 2))
    wh = rng.uniform(1, 12, (n, 2))
    boxes = np.concatenate([xy, xy + wh], 1).astype(np.float32)
    return torch.from_numpy(boxes), torch.from_numpy(rng.random(n).astype(np.float32))


def _png_roundtrip(torch: Any, tv: Any) -> Any:
    import io as _io

    from PIL import Image

    out = []
    for mode, c in (("RGB", 3), ("L", 1), ("RGBA", 4), ("LA", 2)):
        arr = image_array(c=c)
        buf = _io.BytesIO()
        Image.fromarray(arr[:, :, 0] if c == 1 else arr, mode).save(buf, format="PNG")
        data = torch.from_numpy(np.frombuffer(bytearray(buf.getvalue()), dtype=np.uint8))
        out.append(tv.io.decode_image(data))
        out.append(tv.io.decode_image(data, tv.io.ImageReadMode.GRAY))
        out.append(tv.io.decode_image(data, tv.io.ImageReadMode.RGB))
    encoded = tv.io.encode_png(u8(torch))
    out.append(tv.io.decode_image(encoded))
    return out


CASES["utils.make_grid"] = lambda torch, tv: [
    tv.utils.make_grid(f32(torch)[None].expand(5, 3, 13, 17).contiguous(), nrow=2),
    tv.utils.make_grid([f32(torch)[:1], f32(torch)[1:2]], padding=3, pad_value=0.5, normalize=True),
    tv.utils.make_grid(f32(torch) * 3 - 1, normalize=True, value_range=(-1.0, 1.0)),
    tv.utils.make_grid((f32(torch) * 3 - 1)[None].repeat(2, 1, 1, 1), normalize=True, scale_each=True),
]
CASES["io.png"] = _png_roundtrip
CASES["ops.box_iou"] = lambda torch, tv: [tv.ops.box_iou(*[_boxes(torch, 7, s)[0] for s in (1, 2)]),
                                          tv.ops.box_area(_boxes(torch)[0])]  # fmt: skip
CASES["ops.nms"] = lambda torch, tv: [tv.ops.nms(*_boxes(torch, 30), 0.3), tv.ops.nms(*_boxes(torch, 30), 0.05),
                                      tv.ops.batched_nms(*_boxes(torch, 30), torch.arange(30) % 3, 0.2)]  # fmt: skip


def _roi(torch: Any, tv: Any) -> Any:
    x = f32(torch)[None].repeat(2, 1, 1, 1) * torch.tensor([1.0, 2.0])[:, None, None, None]
    boxes = torch.tensor([[0, 1.0, 1.5, 9.0, 8.0], [1, 0.0, 0.0, 16.0, 12.0], [0, 3.3, 2.2, 5.1, 4.0],
                          [1, -2.0, -1.0, 4.0, 20.0]])  # fmt: skip
    return [tv.ops.roi_align(x, boxes, (3, 4)), tv.ops.roi_align(x, boxes, 2, 0.5, 2, aligned=True),
            tv.ops.roi_align(x, [boxes[:2, 1:], boxes[2:, 1:]], [5, 5], sampling_ratio=1)]  # fmt: skip


CASES["ops.roi_align"] = _roi


# --- models ---------------------------------------------------------------------------------------------

MODELS = {
    "resnet18": 64,
    "resnet34": 64,
    "resnet50": 64,
    "resnet101": 64,
    "vgg11": 64,
    "vgg11_bn": 64,
    "vgg16": 64,
    "vgg16_bn": 64,
    "alexnet": 64,
    "mobilenet_v2": 64,
    "mobilenet_v3_small": 64,
    "mobilenet_v3_large": 64,
    "densenet121": 64,
    "efficientnet_b0": 64,
    "squeezenet1_0": 64,
    "squeezenet1_1": 64,
    "vit_b_16": 224,
    "convnext_tiny": 64,
}  # fmt: skip  (name -> input side)


def set_deterministic_weights(torch: Any, model: Any) -> None:
    """Load formula-made values (numpy, no RNG; the same on both sides) into every float parameter and buffer,
    so logits can be compared whatever the init. Scaled by 1/sqrt(fan_in) so activations stay O(1)."""
    new = {}
    for k, (name, p) in enumerate(sorted(model.state_dict().items())):
        if not p.is_floating_point():
            continue
        shape = tuple(p.shape)
        n = int(np.prod(shape))
        fan_in = max(1, n // shape[0]) if len(shape) > 1 else 1
        vals = np.sin(np.arange(n, dtype=np.float64) * 0.7 + k) / np.sqrt(fan_in)
        if name.endswith("running_var"):
            vals = np.abs(vals) + 0.5
        new[name] = torch.from_numpy(vals.reshape(shape).astype(np.float32))
    model.load_state_dict(new, strict=False)


def model_input(torch: Any, side: int) -> Any:
    n = 3 * side * side
    return torch.from_numpy((np.cos(np.arange(n) * 0.05) * 0.5).reshape(1, 3, side, side).astype(np.float32))


def init_summary(torch: Any, model: Any) -> dict:
    """Per parameter/buffer of a freshly seeded model: shape, dtype, float64 sum and first 4 values."""
    out = {}
    for name, p in model.state_dict().items():
        arr = p.detach().cpu().numpy()
        flat = arr.reshape(-1).astype(np.float64)
        out[name] = (tuple(arr.shape), str(p.dtype), float(flat.sum()), flat[:4].tolist())
    return out


# --- datasets -------------------------------------------------------------------------------------------


def _write_idx(path: str, arr: np.ndarray) -> None:
    header = (8 * 256 + arr.ndim).to_bytes(4, "big") + b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
    with open(path, "wb") as f:
        f.write(header + arr.tobytes())


def build_dataset_files(root: str) -> None:
    """Small fake MNIST, CIFAR10 and image-folder trees (numpy + Pillow only)."""
    import os
    import pickle

    from PIL import Image

    rng = np.random.default_rng(7)
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw)
    for split in ("train", "t10k"):
        _write_idx(os.path.join(raw, f"{split}-images-idx3-ubyte"), rng.integers(0, 256, (4, 28, 28), dtype=np.uint8))
        _write_idx(os.path.join(raw, f"{split}-labels-idx1-ubyte"), rng.integers(0, 10, 4).astype(np.uint8))
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder)
    for name in ("data_batch_1", "test_batch"):
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump({"data": rng.integers(0, 256, (3, 3072), dtype=np.uint8), "labels": [3, 1, 4]}, f)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": [f"c{i}" for i in range(10)]}, f)
    for cls, n in (("b_cls", 2), ("a_cls", 1)):
        os.makedirs(os.path.join(root, "folder", cls))
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, (9, 11, 3), dtype=np.uint8)).save(
                os.path.join(root, "folder", cls, f"{i}.png")
            )


def dataset_results(torch: Any, tv: Any, root: str) -> dict:
    import os

    class LocalCIFAR10(tv.datasets.CIFAR10):
        train_list = [["data_batch_1", None]]
        test_list = [["test_batch", None]]
        meta = {"filename": "batches.meta", "key": "label_names", "md5": None}

    out = {}
    mnist = tv.datasets.MNIST(root, train=True, transform=tv.transforms.ToTensor())
    out["mnist"] = [len(mnist), mnist.classes, mnist.class_to_idx, to_plain(mnist.targets), to_plain(mnist[1][0]),
                    mnist[1][1], repr(mnist).replace(root, "<root>").splitlines()]  # fmt: skip
    cifar = LocalCIFAR10(root, train=False)
    out["cifar"] = [len(cifar), cifar.targets, cifar.classes[:3], to_plain(cifar[2][0]), cifar[2][1]]
    folder = tv.datasets.ImageFolder(os.path.join(root, "folder"), transform=tv.transforms.ToTensor())
    out["folder"] = [folder.classes, folder.class_to_idx, folder.targets,
                     [os.path.relpath(p, root) for p, _ in folder.samples], to_plain(folder[0][0])]  # fmt: skip
    fake = tv.datasets.FakeData(size=3, image_size=(3, 6, 5), num_classes=4)
    out["fake"] = [[to_plain(fake[i][0]), fake[i][1]] for i in range(3)]
    return out
