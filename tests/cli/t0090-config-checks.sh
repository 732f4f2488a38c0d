#!/bin/sh
# envlock check --config: an OpenMMLab config's effective value judged
# against the machine probed. Each check has a case that fires and one
# that does not, on fixture trees whose /proc says what the machine has:
# mmpose-container (one A100, mmpose 1.3.1 without mmpretrain),
# ubuntu1604-mmdet (two V100s) and, copied from mmpose-container, the
# seed's 16-core/32-thread 31 GiB box. The configs are the fixtures'
# mmdetection 2.25 chain, the mmpose ViTPose-S config and two children
# of them (tests/fixtures/configs/checks); the 3-category COCO file is
# read by the streaming reader, and its count compared with Python's.
. "$(dirname "$0")/lib.sh"

CFG=$top/tests/fixtures/configs
VIT=$CFG/mmpose/configs/body_2d_keypoint/topdown_heatmap/coco/td-hm_ViTPose-small_8xb64-210e_coco-256x192.py
SEED=$CFG/checks/configs/seed/td-hm_ViTPose-small_8xb64-210e_coco-256x192_seed.py
TINY=$CFG/checks/configs/det/faster_rcnn_r50_fpn_1x_tiny3.py
R50=$CFG/configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py

# run NAME ROOT CONFIG [--cfg-options ...]: check --json into NAME.json, status in NAME.rc
run() {
	name=$1 root=$2 cfg=$3
	shift 3
	set -- --config "$cfg" "$@"
	"$ENVLOCK" check --root "$root" "$@" --json >"$name.json" 2>"$name.err"
	echo $? >"$name.rc"
	findings "$name.json" >"$name.list"
}

# --- the seed's box: mmpose-container's tree with 16 cores x 2 threads and 31 GiB ---
cp -a "$FIXTURES/mmpose-container" seedbox
# a host: no container's CPU, memory or /dev/shm limits (t0105 checks those)
rm seedbox/proc/self/mountinfo
awk 'BEGIN { for (i = 0; i < 32; i++) {
	printf "processor\t: %d\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 9 5950X 16-Core Processor\n", i
	printf "physical id\t: 0\nsiblings\t: 32\ncore id\t\t: %d\ncpu cores\t: 16\n\n", i % 16 } }' >seedbox/proc/cpuinfo
printf 'MemTotal:       32505856 kB\nMemFree:         1048576 kB\n' >seedbox/proc/meminfo
cores=$(grep -c '^processor' seedbox/proc/cpuinfo)
mem_gib=$(awk '/^MemTotal/ { printf "%.1f", $2 / 1048576 }' seedbox/proc/meminfo)

# 1. what it needs: ViTPose's mmpretrain backbone on a tree without mmpretrain
run vit "$FIXTURES/mmpose-container" "$VIT"
check_status "ViTPose on a tree without mmpretrain is breaking" 1 "$(cat vit.rc)"
has "the finding is config-needs-module" vit "breaking config-needs-module"
check_grep "it names mmpretrain and the key" "model.backbone.type = 'mmpretrain.VisionTransformer' needs mmpretrain, which is not installed" vit.json
message vit.json config-needs-module fix >vit.fix
check_grep "its fix: the newest mmpretrain that accepts this tree's mmcv 2.1.0, from the knowledge" \
	"^pip install mmpretrain==1.2.0, the newest mmpretrain that accepts mmcv 2.1.0 (open-mmlab/mmpretrain mmpretrain/__init__.py @ v1.2.0" vit.fix
# the same config on the mmcv-full 1.7.5 box: no mmpretrain release takes an mmcv 1.x
run vit16 "$FIXTURES/ubuntu1604-mmdet" "$VIT"
check_eq "on mmcv-full 1.7.5 the fix is another stack, not an mmpretrain that needs mmcv 2" \
	"no mmpretrain release accepts mmcv-full 1.7.5: envlock solve --for mmpretrain plans a stack that has it" \
	"$("$PYTHON" -c 'import json,sys
print([f["fix"] for f in json.load(open(sys.argv[1]))["findings"] if f["rule"]=="config-needs-module" and ": mmpretrain" in f["subject"]][0])' vit16.json)"
site=$(cd seedbox && find . -path '*site-packages/mmpose-*.dist-info' | head -n 1)
site=${site%/*}
site=${site#./}
mkdir -p "seedbox/$site/mmpretrain-1.2.0.dist-info"
printf 'Metadata-Version: 2.1\nName: mmpretrain\nVersion: 1.2.0\n' >"seedbox/$site/mmpretrain-1.2.0.dist-info/METADATA"
printf 'pip\n' >"seedbox/$site/mmpretrain-1.2.0.dist-info/INSTALLER"
run vit2 seedbox "$VIT"
lacks "with mmpretrain installed, nothing is missing" vit2 config-needs-module
run r50 "$FIXTURES/mmpose-container" "$R50"
lacks "an mmdet config on a tree with mmdet needs nothing more" r50 config-needs-module

# 2. data loading: the seed's 32 + 32 persistent workers on 32 threads and 31 GiB
run seed seedbox "$SEED"
has "the seed's workers are risky" seed "risky config-workers-memory"
check_eq "the arithmetic is shown" \
	"$SEED: at the first validation each of 1 training process(es) has 32 train workers (persistent_workers=True: they stay alive) and 32 val workers: 64 worker processes on $cores logical cores; at about 0.5 GiB each that is 32.0 GiB of this machine's $mem_gib GiB, and the kernel kills them" \
	"$(message seed.json config-workers-memory)"
run seed_val4 seedbox "$SEED" --cfg-options val_dataloader.num_workers=4
lacks "4 val workers fit" seed_val4 config-workers-memory
run seed_np seedbox "$SEED" --cfg-options train_dataloader.persistent_workers=False
lacks "train workers that are not persistent are gone at validation" seed_np config-workers-memory
lacks "32 workers on 32 threads are not starved" seed config-workers-starved
run seed_w2 seedbox "$SEED" --cfg-options train_dataloader.num_workers=2
has "2 workers on 32 threads starve the GPU" seed_w2 "info config-workers-starved"
check_eq "the suggestion is half the cores" "--cfg-options train_dataloader.num_workers=$((cores / 2))" \
	"$(message seed_w2.json config-workers-starved fix)"
# workers alive at once against the logical cores, whatever the memory
has "32 persistent train + 32 val workers on 32 threads are oversubscribed" seed "risky config-workers-oversubscribed"
check_eq "the count at validation is shown" \
	"$SEED: 64 DataLoader worker processes at once (32 train workers kept alive and 32 val workers at validation, in each of 1 training process(es)) on 32 logical cores: each worker is a process of its own, so they take turns on the cores, and past the core count more workers feed the GPU slower, not faster" \
	"$(message seed.json config-workers-oversubscribed)"
check_eq "the fix sets both loaders in one --cfg-options" \
	"--cfg-options train_dataloader.num_workers=16 val_dataloader.num_workers=4" "$(message seed.json config-workers-oversubscribed fix)"
# shellcheck disable=SC2046
run seed_fixed seedbox "$SEED" $(message seed.json config-workers-oversubscribed fix)
lacks "that command clears it" seed_fixed config-workers-oversubscribed
lacks "and the memory finding" seed_fixed config-workers-memory
run seed_w64 seedbox "$SEED" --cfg-options train_dataloader.num_workers=64 train_dataloader.persistent_workers=False
check_eq "64 train workers on 32 threads, counted without the val ones (not persistent)" \
	"$SEED: 64 DataLoader worker processes at once (64 train workers in each of 1 training process(es)) on 32 logical cores: each worker is a process of its own, so they take turns on the cores, and past the core count more workers feed the GPU slower, not faster" \
	"$(message seed_w64.json config-workers-oversubscribed)"
lacks "64 workers fit in 31 GiB when not persistent: no memory finding, the cores one stands alone" seed_w64 config-workers-memory
cp -a seedbox fourbox
awk 'BEGIN { for (i = 0; i < 4; i++) printf "processor\t: %d\nmodel name\t: Intel(R) Core(TM) i5\n\n", i }' >fourbox/proc/cpuinfo
printf 'MemTotal:       264241152 kB\nMemFree:         1048576 kB\n' >fourbox/proc/meminfo
run four fourbox "$SEED" --cfg-options train_dataloader.num_workers=128 train_dataloader.persistent_workers=False val_dataloader.num_workers=2
has "128 workers on 4 threads with 252 GiB: risky on the cores alone" four "risky config-workers-oversubscribed"
check_eq "the fix is half the cores" "--cfg-options train_dataloader.num_workers=2" "$(message four.json config-workers-oversubscribed fix)"
lacks "and no memory finding" four config-workers-memory
run seed_ok seedbox "$SEED" --cfg-options val_dataloader.num_workers=2 train_dataloader.num_workers=16
lacks "16 + 2 on 32 threads fit" seed_ok config-workers-oversubscribed
has "no pin_memory on a GPU machine is noted" seed "info config-pin-memory"
run seed_pin seedbox "$SEED" --cfg-options train_dataloader.pin_memory=True
lacks "pin_memory=True is not" seed_pin config-pin-memory

# batch against GPU memory: the A100's 80 GB is in its name in the tree
lacks "batch 32 under the name's 64 per GPU is not noted" seed config-batch-gpu-memory
run seed_b128 seedbox "$SEED" --cfg-options train_dataloader.batch_size=128
has "batch 128 over the name's 64 per GPU is noted" seed_b128 "info config-batch-gpu-memory"
check_grep "with the ratio and the GPU's memory" "is 2x the 64 of the config's reference run (8xb64); .* NVIDIA A100-SXM4-80GB has 80 GiB" seed_b128.json

# the ViT backbone's activations against the GPU's memory: 12 layers, 192 tokens of 384 dims,
# 12 heads are 192*384*(34 + 5*12*192/384) bytes a layer and sample in 16-bit, 108 MiB in fp32
run seed_b256 seedbox "$VIT" --cfg-options train_dataloader.batch_size=256
lacks "batch 256 on the A100's 80 GiB: 27 GiB of activations fit" seed_b256 config-batch-activations
cp -a seedbox v16box
sed -i 's/NVIDIA A100-SXM4-80GB/Tesla V100-PCIE-16GB/' v16box/proc/driver/nvidia/gpus/*/information
run v16_b256 v16box "$VIT" --cfg-options train_dataloader.batch_size=256
has "batch 256 on a 16 GB V100 is risky" v16_b256 "risky config-batch-activations"
check_eq "with its arithmetic" \
	"$VIT: train_dataloader.batch_size=256 on the Tesla V100-PCIE-16GB (16.0 GiB): the backbone's 12 transformer layers (192 tokens of 384 dims, 12 heads) keep about 108 MiB of activations a sample in fp32, twice the 16-bit figure, 27.0 GiB for the batch (1.7x the GPU's memory) before the weights, gradients and optimizer state: training stops with CUDA out of memory" \
	"$(message v16_b256.json config-batch-activations)"
check_eq "and the power of two that fits" "--cfg-options train_dataloader.batch_size=128" "$(message v16_b256.json config-batch-activations fix)"
run v16_b64 v16box "$VIT" --cfg-options train_dataloader.batch_size=64
lacks "batch 64 (6.8 GiB) fits the V100" v16_b64 config-batch-activations
run v16_amp v16box "$VIT" --cfg-options train_dataloader.batch_size=256 optim_wrapper.type=AmpOptimWrapper
lacks "with AMP, 13.5 GiB of 16-bit activations fit" v16_amp config-batch-activations
# a 12 GB card whose memory nvidia-smi recorded in the lock
"$ENVLOCK" save -q --root seedbox --config "$VIT" --cfg-options train_dataloader.batch_size=256 -o b256.lock
"$PYTHON" - b256.lock <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["gpu"]["devices"][0].update(name="NVIDIA GeForce RTX 4070", memory_mib=12282)
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
"$ENVLOCK" check b256.lock --json >b256.json 2>b256.err
check_grep "batch 256 on a 12 GB RTX 4070 (nvidia-smi's memory in the lock) is risky" \
	"batch_size=256 on the NVIDIA GeForce RTX 4070 (12.0 GiB): .* 27.0 GiB for the batch (2.3x the GPU's memory)" b256.json
check_eq "its fix" "--cfg-options train_dataloader.batch_size=64" "$(message b256.json config-batch-activations fix)"

# 3. precision: the A100 has tensor cores; a P100 has none
has "fp32 on an A100 is noted with the seed's gain" seed "info config-amp-off"
check_grep "the gain as measured" "133 samples/s in fp32 and 194 with AMP" seed.json
run seed_amp seedbox "$SEED" --cfg-options optim_wrapper.type=AmpOptimWrapper
lacks "AMP on an A100 is not noted" seed_amp config-amp-off
check_eq "the fix is the switch of mmengine's dialect" "--cfg-options optim_wrapper.type=AmpOptimWrapper (what tools/train.py --amp sets)" \
	"$(message seed.json config-amp-off fix)"
run tiny_fp32 "$FIXTURES/ubuntu1604-mmdet" "$TINY"
check_eq "and of mmcv 1.x's for an mmdetection 2.x config on V100s" "--cfg-options fp16.loss_scale=512." \
	"$(message tiny_fp32.json config-amp-off fix)"
run tiny_fp16 "$FIXTURES/ubuntu1604-mmdet" "$TINY" --cfg-options fp16.loss_scale=512.
lacks "which that command clears" tiny_fp16 config-amp-off
lacks "nor is it without tensor cores" seed_amp config-amp-no-tensor-cores
cp -a seedbox p100box
sed -i 's/NVIDIA A100-SXM4-80GB/Tesla P100-PCIE-16GB/' p100box/proc/driver/nvidia/gpus/*/information
run p100_amp p100box "$SEED" --cfg-options optim_wrapper.type=AmpOptimWrapper
has "AMP on a P100 gains nothing" p100_amp "info config-amp-no-tensor-cores"
check_grep "compute capability from NVIDIA's table" "Tesla P100-PCIE-16GB, compute capability 6.0, gains nothing" p100_amp.json
run p100 p100box "$SEED"
lacks "fp32 on a P100 is not noted" p100 config-amp-off
lacks "nor AMP's absence" p100 config-amp-no-tensor-cores

# 4. the learning rate against the total batch: two V100s in ubuntu1604-mmdet
MM=$FIXTURES/ubuntu1604-mmdet
run lr "$MM" "$TINY"
has "0.02 for batch 16 on 2 GPUs x 2 is risky" lr "risky config-lr-scaling"
check_grep "with the scaled value" "optimizer.lr=0.02 is set for a total batch of 16 (auto_scale_lr.base_batch_size), but this machine runs 2 per GPU x 2 GPU(s) = 4; by the linear scaling rule the lr is 0.005" lr.json
run lr4 "$MM" "$TINY" --cfg-options data.samples_per_gpu=4
check_grep "the seed's samples_per_gpu=4" "runs 4 per GPU x 2 GPU(s) = 8; by the linear scaling rule the lr is 0.01" lr4.json
run lr8 "$MM" "$TINY" --cfg-options data.samples_per_gpu=8
lacks "8 per GPU x 2 GPUs is the reference batch" lr8 config-lr-scaling
run lr_set "$MM" "$TINY" --cfg-options optimizer.lr=0.005
lacks "an lr given on the command line is the user's" lr_set config-lr-scaling
run lr_auto "$MM" "$TINY" --cfg-options auto_scale_lr.enable=True
lacks "auto_scale_lr.enable scales it at start" lr_auto config-lr-scaling
# the same on a machine whose GPUs are not counted (no kernel driver in the tree): the
# batch per GPU against the one the lr is for, 16 = 8 GPUs x 2 by OpenMMLab's convention
cp -a "$MM" nogpu && rm -rf nogpu/proc/driver/nvidia
run lr_nogpu nogpu "$TINY" --cfg-options data.samples_per_gpu=4
has "4 per GPU where the lr is for 2, GPUs not counted: risky" lr_nogpu "risky config-lr-per-gpu"
check_eq "with its arithmetic" \
	"$TINY: optimizer.lr=0.02 is set for 2 per GPU (auto_scale_lr.base_batch_size 16 = 8 GPUs x 2), but this run takes 4 per GPU: on as many GPUs each step takes 2x the samples (the lock counts no GPU, so the total is not known), and by the linear scaling rule the lr is 0.04" \
	"$(message lr_nogpu.json config-lr-per-gpu)"
lacks "and not the total-batch rule, which needs the count" lr_nogpu config-lr-scaling
run lr_nogpu_fixed nogpu "$TINY" --cfg-options data.samples_per_gpu=4 optimizer.lr=0.04
lacks "the lr it suggests, given, clears it" lr_nogpu_fixed config-lr-per-gpu
run lr_nogpu2 nogpu "$TINY"
lacks "2 per GPU as the lr is for: nothing" lr_nogpu2 config-lr-per-gpu
run lr_gpus "$MM" "$TINY" --cfg-options data.samples_per_gpu=4
lacks "with the GPUs counted, the total-batch rule speaks instead" lr_gpus config-lr-per-gpu
check_grep "the seed's ViTPose reads its reference from auto_scale_lr" "is set for a total batch of 512 (auto_scale_lr.base_batch_size)" seed.json

# 5. classes against the annotation file (3 categories; Python counts them too)
ncat=$("$PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["categories"]))' \
	"$CFG/checks/data/tiny3/annotations/instances_train.json")
has "80 classes for a 3-category file is breaking" lr "breaking config-num-classes"
check_eq "the counts are named" \
	"$TINY: model.roi_head.bbox_head.num_classes=80, but the training set has $ncat classes (categories in data/tiny3/annotations/instances_train.json): the head is trained for the wrong classes" \
	"$(message lr.json config-num-classes)"
lacks "the RPN head's single class is not a dataset class" lr "config-num-classes.*rpn"
run cls3 "$MM" "$TINY" --cfg-options model.roi_head.bbox_head.num_classes=3
lacks "num_classes=3 matches" cls3 config-num-classes
run cls2 "$MM" "$TINY" --cfg-options model.roi_head.bbox_head.num_classes=3 'data.train.classes=[forklift,pallet]'
check_grep "a classes= override decides the count" "num_classes=3, but the training set has 2 classes (the classes= override data.train.classes)" cls2.json

# 6. cuDNN's autotuner against the train pipeline's sizes
has "TopdownAffine's fixed size without the autotuner is noted" seed "info config-cudnn-benchmark-fixed"
check_grep "naming the transform" "every training image has one size (TopdownAffine), but env_cfg.cudnn_benchmark is not True" seed.json
run seed_bench seedbox "$SEED" --cfg-options env_cfg.cudnn_benchmark=True
lacks "with it on, nothing" seed_bench config-cudnn-benchmark-fixed
run tiny_bench "$MM" "$TINY" --cfg-options cudnn_benchmark=True
has "keep_ratio sizes with the autotuner are noted" tiny_bench "info config-cudnn-benchmark-varying"
lacks "keep_ratio sizes without it are not" lr config-cudnn-benchmark-varying

# 7. the files it names
run ckpt "$MM" "$TINY" --cfg-options "load_from=$scratch/none.pth"
has "a load_from that does not exist is breaking" ckpt "breaking config-checkpoint-missing"
: >present.pth
run ckpt2 "$MM" "$TINY" --cfg-options "load_from=$scratch/present.pth"
lacks "one that exists is not" ckpt2 config-checkpoint-missing
run ckpt3 "$MM" "$TINY" --cfg-options load_from=https://download.openmmlab.com/x.pth
lacks "a URL is fetched at start, not judged" ckpt3 config-checkpoint-missing
run r50b "$MM" "$R50"
has "COCO's annotation file missing here is risky" r50b "risky config-annotations-missing"
lacks "the 3-category file is there" lr config-annotations-missing
mkdir wd
run resume seedbox "$SEED" --cfg-options resume=True --cfg-options "work_dir=$scratch/wd"
has "resume=True with no last_checkpoint is noted" resume "info config-resume-nothing"
echo "$scratch/wd/epoch_10.pth" >wd/last_checkpoint
run resume2 seedbox "$SEED" --cfg-options resume=True "work_dir=$scratch/wd"
check_eq "several K=V after one --cfg-options, as tools/train.py takes them" 0 "$(cat resume2.rc)"
lacks "with a last_checkpoint, nothing" resume2 config-resume-nothing

# 8. the lock holds the merged config and the files; check of the lock judges the same
"$ENVLOCK" save --root seedbox --config "$SEED" -o seed.lock >save.out 2>&1
check_status "save --config of the seed" 0 $?
check_eq "the lock holds the merged loader" 32 "$(jget seed.lock configs.files.0.effective.value.train_dataloader.num_workers)"
check_eq "and the base's optimizer" 0.0005 "$(jget seed.lock configs.files.0.effective.value.optim_wrapper.optimizer.lr)"
check_eq "and the annotation file's categories" 1 "$(jget seed.lock configs.files.0.effective.files.0.categories)"
check_eq "by name" '["person"]' "$(jget seed.lock configs.files.0.effective.files.0.category_names)"
if validate seed.lock >val.out 2>&1; then ok "the lock validates against the schema"; else not_ok "the lock validates against the schema"; sed 's/^/#   /' val.out; fi
"$ENVLOCK" check seed.lock --json >seedlock.json 2>&1
findings seedlock.json | grep ' config-' >seedlock.list
grep ' config-' seed.list >seedlive.list
check_diff "check of the lock gives the config findings check --config gave" seedlive.list seedlock.list
check_grep "the lock's own checks hold them" '"config-workers-memory"' seed.lock

# 8b. 'pkg::path' bases, read from the installed package's .mim/configs as mmengine does
mkdir -p pk/configs
printf "_base_ = ['mmdet::rtmdet/rtmdet_tiny_8xb32-300e_coco.py']\nmodel = dict(bbox_head=dict(num_classes=3))\n" >pk/configs/rtm.py
run pkg_none "$FIXTURES/no-nvidia" "$scratch/pk/configs/rtm.py"
has "a package base of a package not installed is breaking" pkg_none "breaking config-chain-missing"
check_eq "its fix, on a machine without mmcv, plans the stack mmdet needs" \
	"envlock solve --for mmdet plans the torch, mmcv and mmdet to install together" \
	"$(message pkg_none.json config-chain-missing fix)"
printf "_base_ = ['mmpretrain::_base_/default_runtime.py']\n" >pk/configs/cls.py
run pkg_mmcv2 "$FIXTURES/mmpose-container" "$scratch/pk/configs/cls.py"
message pkg_mmcv2.json config-chain-missing fix >pkg_mmcv2.fix
check_grep "beside mmcv 2.1.0, the newest mmpretrain that accepts it" \
	"^pip install mmpretrain==1.2.0, the newest mmpretrain that accepts mmcv 2.1.0 (open-mmlab/mmpretrain mmpretrain/__init__.py" pkg_mmcv2.fix
printf "_base_ = ['foopkg::x/y.py']\n" >pk/configs/foo.py
run pkg_foo "$FIXTURES/no-nvidia" "$scratch/pk/configs/foo.py"
check_eq "a package no table knows: the fix names it (the install commands are the knowledge's)" \
	"install the foopkg package" "$(message pkg_foo.json config-chain-missing fix)"
run pkg_file seedbox "$scratch/pk/configs/rtm.py"
check_grep "a config the package does not ship names the in-tree path" \
	"needs the file /$site/mmdet/.mim/configs/rtmdet/rtmdet_tiny_8xb32-300e_coco.py, which the machine probed lacks" pkg_file.json
mkdir -p "seedbox/$site/mmdet/.mim/configs/rtmdet" "seedbox/$site/mmdet/.mim/configs/_base_"
printf "_base_ = ['../_base_/default_runtime.py']\nmodel = dict(type='RTMDet', bbox_head=dict(type='RTMDetSepBNHead', num_classes=80, in_channels=96))\nmax_epochs = 300\n" \
	>"seedbox/$site/mmdet/.mim/configs/rtmdet/rtmdet_tiny_8xb32-300e_coco.py"
printf "default_scope = 'mmdet'\nenv_cfg = dict(cudnn_benchmark=False)\n" >"seedbox/$site/mmdet/.mim/configs/_base_/default_runtime.py"
"$ENVLOCK" save --root seedbox --config "$scratch/pk/configs/rtm.py" -o pk.lock >/dev/null 2>&1
check_eq "with the package's configs there, the chain merges: the child's classes" 3 \
	"$(jget pk.lock configs.files.0.effective.value.model.bbox_head.num_classes)"
check_eq "and the package's own keys and its own base's" "96 300 mmdet" \
	"$(jget pk.lock configs.files.0.effective.value.model.bbox_head.in_channels) $(jget pk.lock configs.files.0.effective.value.max_epochs) $(jget pk.lock configs.files.0.effective.value.default_scope)"
printf "_base_ = ['mmdet::../../../etc/passwd.py']\n" >pk/configs/escape.py
"$ENVLOCK" save --root seedbox --config "$scratch/pk/configs/escape.py" -o esc.lock >/dev/null 2>&1
check_grep "a package base may not climb out of the package's configs" "is no package config" esc.lock

# 9. diff shows a config's changes by key path, as --cfg-options names them
"$ENVLOCK" save --root seedbox --config "$SEED" --cfg-options train_dataloader.num_workers=2 \
	--cfg-options train_dataloader.dataset.pipeline.5.input_size=[288,384] -o seed2.lock >/dev/null 2>&1
"$ENVLOCK" diff seed.lock seed2.lock >diff.out 2>&1
check_grep "a changed number" "$SEED: train_dataloader.num_workers  *32  *→ 2 " diff.out
check_grep "a changed list, as Python writes it" "$SEED: train_dataloader.dataset.pipeline.5.input_size  *\[192, 256\]  *→ \[288, 384\]" diff.out
check_eq "nothing else of the config differs" 2 "$(grep "^  $SEED: " diff.out | grep -c ' → ')"
check_grep "and the findings that came with it" "^  $SEED: train_dataloader  *new: rule config-workers-starved" diff.out
"$ENVLOCK" diff seed.lock seed2.lock --json >diff.json 2>&1
# one --cfg-options with several K=V, as tools/train.py takes them, in save as in check
"$ENVLOCK" save --root seedbox --config "$SEED" --cfg-options train_dataloader.num_workers=2 \
	train_dataloader.dataset.pipeline.5.input_size=[288,384] -o seed3.lock >save3.out 2>&1
check_status "save takes several K=V after one --cfg-options" 0 $?
"$ENVLOCK" diff seed2.lock seed3.lock --only configs >diff23.out 2>&1
check_status "and records what two --cfg-options record" 0 $?
"$ENVLOCK" save --root seedbox --cfg-options train_dataloader.num_workers=2 --config "$SEED" -q -o - >seed4.lock 2>save4.err
check_eq "the next option ends them" 2 "$(jget seed4.lock configs.files.0.effective.value.train_dataloader.num_workers)"
"$ENVLOCK" check --root seedbox --config "$SEED" --cfg-options train_dataloader.num_workers=2 seed.lock >bad9.out 2>bad9.err
check_status "a word without = ends them too: here a lockfile beside --config" 2 $?
check_eq "--json has the key path" "32 2" "$("$PYTHON" -c 'import json,sys
d=json.load(open(sys.argv[1]))
x=[i for i in d["differences"] if i["key"].endswith(": train_dataloader.num_workers")]
print(x[0]["a"], x[0]["b"])' diff.json 2>&1)"

# 10. bad input
"$ENVLOCK" check --config "$scratch/nope.py" >bad1.out 2>bad1.err
check_status "a config that does not exist" 2 $?
check_eq "one line naming it" "envlock: check: 'nope.py': no such file" "$(cat bad1.err)"
esc=$(printf '\033')
"$ENVLOCK" check --config "nope${esc}[31m.py" >bad1e.out 2>bad1e.err
check_eq "a name with an escape is shown escaped, never raw to the terminal" \
	"envlock: check: 'nope\\x1b[31m.py': no such file" "$(cat bad1e.err)"
"$ENVLOCK" check --cfg-options a=1 >bad2.out 2>bad2.err
check_status "--cfg-options without --config" 2 $?
check_eq "says so" "envlock: check: --cfg-options needs --config" "$(cat bad2.err)"
"$ENVLOCK" check seed.lock --config "$SEED" >bad3.out 2>bad3.err
check_status "--config with a lockfile" 2 $?
check_eq "one line" 1 "$(wc -l <bad3.err)"
mkdir -p broken/configs broken/data
printf '{"images": [{"id": 1, "file_name": "a.jpg"}], "categories": [{"id": 1, "na' >broken/data/ann.json
printf "_base_ = '%s'\ndata = dict(train=dict(ann_file='data/ann.json'))\n" "$TINY" >broken/configs/cut.py
run cut "$MM" "$scratch/broken/configs/cut.py"
check_status "a truncated annotation file is no error of check" 1 "$(cat cut.rc)"
lacks "and no class count is guessed from it" cut config-num-classes
"$ENVLOCK" save --root "$MM" --config "$scratch/broken/configs/cut.py" -o cut.lock >/dev/null 2>&1
check_eq "the lock says why" "'$scratch/broken/data/ann.json': not a COCO annotation file: \"categories\" does not end" \
	"$(jget cut.lock configs.files.0.effective.files.0.error)"
printf '{"categories": {"id": 1}}' >broken/data/ann.json
"$ENVLOCK" save --root "$MM" --config "$scratch/broken/configs/cut.py" -o cut2.lock >/dev/null 2>&1
check_eq "categories that are no list" "'$scratch/broken/data/ann.json': not a COCO annotation file: \"categories\" is not an array" \
	"$(jget cut2.lock configs.files.0.effective.files.0.error)"

echo "1..$n"
