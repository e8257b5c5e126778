# Minimal image for running the app (a later issue completes deployment: Space hardware, roles, volumes).
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index make \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN scripts/setup_wordnet.sh /app/.cache/nltk_data
ENV NLTK_DATA=/app/.cache/nltk_data GRADIO_SERVER_NAME=0.0.0.0 GRADIO_ANALYTICS_ENABLED=False
EXPOSE 7860
CMD ["python", "app.py"]
