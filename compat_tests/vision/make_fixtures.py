"""Reference outputs of real torchvision for the torchlike.vision compat tests.

How it is run (by the lead, on a machine where torchvision imports; CPU execution):

    cd <repo> && python compat_tests/vision/make_fixtures.py

Made with Python 3.12, torch 2.11, torchvision 0.26 and the Pillow of that environment. It is
deterministic (numpy-made inputs, torch.manual_seed before every random case), runs in about a minute
on CPU, and writes under compat_tests/vision/fixtures/ (well under 8 MB):

- transforms.pkl: {case name: result} for every case in cases.CASES (functional ops on PIL images,
  uint8 and float tensors; random transforms applied 3 times after manual_seed, plus one more
  torch.rand(1) showing how far the generator was advanced);
- models.pkl: per model in cases.MODELS: the state_dict layout and init summary of a model built after
  torch.manual_seed(0), its repr, and its logits for a fixed input with formula-set weights;
- squeezenet_c3.pth: real torchvision's squeezenet1_1(num_classes=3) after manual_seed(0), saved with
  torch.save (about 3 MB; a resnet18 file would be 45 MB), and squeezenet_c3_logits.npy, its eval logits
  for cases.model_input(64);
- datasets.pkl: MNIST, CIFAR10 (md5-free subclass), ImageFolder and FakeData read back from the small fake
  files cases.build_dataset_files writes (lengths, class maps, targets, items).

``--out DIR`` writes elsewhere and ``--models a,b`` limits the model list (both used to dry-run this script
under ``python -m torchlike run``, where torchvision is torchlike.vision).
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision
import torchvision.transforms.v2  # noqa: F401  (a subpackage `import torchvision` does not load; the v2 cases need it)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cases  # noqa: E402  (the case table sits beside this script)


def main() -> None:
    t0 = time.time()
    out_dir = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else os.path.join(HERE, "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    if hasattr(torch, "set_num_threads"):  # absent in the torchlike dry run
        torch.set_num_threads(1)  # reductions in one thread: the fixed summation order of a plain CPU run
    results = {}
    for name, case in cases.CASES.items():
        try:
            results[name] = ("ok", cases.to_plain(case(torch, torchvision)))
        except Exception as e:  # the error is part of the reference
            results[name] = ("error", type(e).__name__, str(e))
    meta = {"torch": torch.__version__, "torchvision": torchvision.__version__}
    import PIL

    meta["PIL"] = PIL.__version__
    with open(os.path.join(out_dir, "transforms.pkl"), "wb") as f:
        pickle.dump({"meta": meta, "results": results}, f, protocol=4)
    print(f"transforms: {len(results)} cases in {time.time() - t0:.1f}s")

    with tempfile.TemporaryDirectory() as root:
        cases.build_dataset_files(root)
        with open(os.path.join(out_dir, "datasets.pkl"), "wb") as f:
            pickle.dump({"meta": meta, "results": cases.dataset_results(torch, torchvision, root)}, f, protocol=4)

    models = {}
    only = sys.argv[sys.argv.index("--models") + 1].split(",") if "--models" in sys.argv else list(cases.MODELS)
    for name, side in cases.MODELS.items():
        if name not in only:
            continue
        t1 = time.time()
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)()
        summary = cases.init_summary(torch, model)
        cases.set_deterministic_weights(torch, model)
        model.eval()
        with torch.no_grad():
            logits = model(cases.model_input(torch, side)).double().numpy()
        models[name] = {"summary": summary, "logits": logits, "repr": repr(model)}
        print(f"  {name}: {time.time() - t1:.1f}s")
    with open(os.path.join(out_dir, "models.pkl"), "wb") as f:
        pickle.dump({"meta": meta, "models": models}, f, protocol=4)

    torch.manual_seed(0)
    tiny = torchvision.models.squeezenet1_1(num_classes=3)
    torch.save(tiny.state_dict(), os.path.join(out_dir, "squeezenet_c3.pth"))
    with torch.no_grad():
        tiny.eval()
        np.save(os.path.join(out_dir, "squeezenet_c3_logits.npy"), tiny(cases.model_input(torch, 64)).numpy())
    print(f"done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
