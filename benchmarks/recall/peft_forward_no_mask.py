import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("roberta-base")
base = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=2)
model = get_peft_model(base, LoraConfig(task_type="SEQ_CLS", r=8))
enc = tokenizer(["first review", "a second, longer review"], padding=True, return_tensors="pt")
with torch.no_grad():
    logits = model(input_ids=enc["input_ids"]).logits
